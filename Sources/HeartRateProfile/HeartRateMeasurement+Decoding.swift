extension HeartRateMeasurement {
    /// Why a Heart Rate Measurement payload could not be decoded at all.
    ///
    /// Only a missing flags byte or a missing/cut heart-rate field is an error; a cut optional field is not (it
    /// yields a measurement marked ``HeartRateMeasurement/isTruncated``).
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What was wrong.
        public enum Reason: Hashable, Sendable {
            /// The payload is empty: there is no flags byte.
            case emptyPayload
            /// The flags announce a heart-rate field of this format, but fewer bytes than it needs follow.
            case heartRateFieldCut(ValueFormat)
        }

        /// What was wrong.
        public var reason: Reason
        /// Byte offset in the payload where the missing field should have started.
        public var offset: Int
        /// Length of the payload that was decoded.
        public var payloadLength: Int

        public var description: String {
            switch reason {
            case .emptyPayload:
                return "empty payload: the flags byte at offset 0 is missing"
            case .heartRateFieldCut(let format):
                let needed = format.byteCount
                let present = max(0, payloadLength - offset)
                let byteWord = present == 1 ? "byte is" : "bytes are"
                return
                    "heart-rate field (\(format.rawValue)) at offset \(offset) needs \(needed) bytes, only \(present) \(byteWord) present"
            }
        }
    }

    /// Decodes a notification payload of characteristic 0x2A37.
    ///
    /// Reserved flag bits (5–7) are ignored. A missing or cut heart-rate field throws ``DecodingError``; an
    /// announced energy field that is cut short, or an odd trailing byte in the RR area, keeps every complete
    /// field and sets ``isTruncated``. Never reads outside `bytes`.
    public init<Bytes: Collection>(decoding bytes: Bytes) throws(DecodingError) where Bytes.Element == UInt8 {
        var reader = ByteReader(bytes)
        guard let flags = reader.readUInt8() else {
            throw DecodingError(reason: .emptyPayload, offset: 0, payloadLength: reader.count)
        }
        let format: ValueFormat = flags & Flag.valueFormatUInt16 != 0 ? .uint16 : .uint8
        let heartRateOffset = reader.offset
        let heartRate: UInt16?
        switch format {
        case .uint8: heartRate = reader.readUInt8().map(UInt16.init)
        case .uint16: heartRate = reader.readUInt16()
        }
        guard let heartRate else {
            throw DecodingError(
                reason: .heartRateFieldCut(format),
                offset: heartRateOffset,
                payloadLength: reader.count
            )
        }

        var truncated = false
        var energy: UInt16?
        if flags & Flag.energyExpendedPresent != 0 {
            energy = reader.readUInt16()
            if energy == nil {
                truncated = true
                // A cut energy field leaves at most one byte, which belongs to energy, not to the RR area.
                reader.skipRemaining()
            }
        }

        var intervals: [RRInterval] = []
        if flags & Flag.rrIntervalsPresent != 0 {
            intervals.reserveCapacity(reader.remaining / 2)
            while let ticks = reader.readUInt16() {
                intervals.append(RRInterval(ticks: ticks))
            }
            if reader.remaining > 0 { truncated = true }
        }

        self.init(
            heartRate: heartRate,
            format: format,
            sensorContact: SensorContact(bits: flags >> Flag.contactShift),
            energyExpended: energy,
            rrIntervals: intervals,
            isTruncated: truncated
        )
    }
}
