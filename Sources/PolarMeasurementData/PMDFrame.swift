/// One notification of the PMD data characteristic: a header and the samples of one measurement.
///
/// `type (u8) | timestamp (u64 LE, ns since 2000-01-01T00:00:00Z, of the frame's last sample) | frame type (u8:
/// bit 7 set = delta-compressed, bits 0–6 the layout) | samples`. ``init(decoding:)`` reads the header;
/// ``samples(factor:)`` reads the samples of the layouts an H10 sends.
public struct PMDFrame: Hashable, Sendable {
    /// The measurement the samples belong to.
    public var type: PMDMeasurementType
    /// Nanoseconds since 2000-01-01T00:00:00Z on the sensor's clock, of the last sample in the frame.
    public var sensorTimestamp: UInt64
    /// The sample layout (bits 0–6 of the frame-type byte).
    public var layout: UInt8
    /// Whether the samples are delta-compressed (bit 7 of the frame-type byte).
    public var isCompressed: Bool
    /// The sample bytes after the header.
    public var content: [UInt8]

    /// The header's length in bytes.
    public static let headerLength = 10
    /// Seconds from 1970-01-01 to 2000-01-01, the PMD clock's epoch.
    public static let epochOffsetFromUnix: UInt64 = 946_684_800

    public init(type: PMDMeasurementType, sensorTimestamp: UInt64, layout: UInt8, isCompressed: Bool, content: [UInt8])
    {
        self.type = type
        self.sensorTimestamp = sensorTimestamp
        self.layout = layout & 0x7F
        self.isCompressed = isCompressed
        self.content = content
    }

    /// Reads a frame's header; the samples are read by ``samples(factor:)``.
    public init(decoding bytes: [UInt8]) throws(PMDFrameError) {
        guard bytes.count <= PMDService.maximumValueLength else {
            throw PMDFrameError(.tooLong, offset: PMDService.maximumValueLength, length: bytes.count)
        }
        guard bytes.count > Self.headerLength else {
            throw PMDFrameError(.noSamples, offset: min(bytes.count, Self.headerLength), length: bytes.count)
        }
        var reader = PMDByteReader(bytes)
        let type = reader.readUInt8() ?? 0
        let timestamp = reader.readUnsigned(width: 8) ?? 0
        let frameType = reader.readUInt8() ?? 0
        self.init(
            type: PMDMeasurementType(rawValue: type),
            sensorTimestamp: timestamp,
            layout: frameType & 0x7F,
            isCompressed: frameType & 0x80 != 0,
            content: reader.readRest()
        )
    }

    /// The bytes of this frame, as a sensor notifies it.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = [type.rawValue]
        for index in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: sensorTimestamp >> (8 * UInt64(index)))) }
        bytes.append(layout | (isCompressed ? 0x80 : 0))
        return bytes + content
    }

    /// The sensor timestamp as seconds since 1970 (the sensor's clock, not the host's).
    public var unixSeconds: Double {
        Double(sensorTimestamp) / 1e9 + Double(Self.epochOffsetFromUnix)
    }
}

/// Why a PMD data frame was refused.
public struct PMDFrameError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// Longer than any attribute value can be.
        case tooLong
        /// The header is cut or no sample follows it.
        case noSamples
        /// A measurement or layout this decoder does not read.
        case unsupported(PMDMeasurementType, layout: UInt8, compressed: Bool)
        /// The sample bytes are not a whole number of samples of this many bytes.
        case partialSample(sampleBytes: Int)
        /// A delta block's bit width is 0 or wider than 32 bits.
        case deltaWidth(Int)
        /// A delta block announces more bits than the frame holds.
        case deltaBlockCut(neededBits: Int)
        /// Adding the deltas left the range of a 32-bit sample.
        case sampleOverflow
    }

    public var reason: Reason
    /// Byte offset in the frame where the fault was found.
    public var offset: Int
    /// The frame's length.
    public var length: Int

    public init(_ reason: Reason, offset: Int, length: Int) {
        self.reason = reason
        self.offset = offset
        self.length = length
    }

    public var description: String {
        switch reason {
        case .tooLong:
            "a PMD frame of \(length) bytes, longer than the \(PMDService.maximumValueLength) an attribute holds"
        case .noSamples: "a PMD frame of \(length) bytes holds no sample (its header is \(PMDFrame.headerLength))"
        case .unsupported(let type, let layout, let compressed):
            "\(type) frame type \(layout)\(compressed ? " (compressed)" : "") is not one systole reads"
        case .partialSample(let width):
            "\(length - PMDFrame.headerLength) sample bytes are not a whole number of \(width)-byte samples"
        case .deltaWidth(let width): "a delta block of \(width)-bit deltas at offset \(offset) (1–32 allowed)"
        case .deltaBlockCut(let bits):
            "a delta block at offset \(offset) needs \(bits) bits, more than the \(length - offset - 2) bytes left"
        case .sampleOverflow: "the deltas at offset \(offset) leave the range of a sample"
        }
    }
}
