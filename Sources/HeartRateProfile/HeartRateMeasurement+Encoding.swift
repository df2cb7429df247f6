extension HeartRateMeasurement {
    /// The flags byte ``encoded()`` writes. Reserved bits are always zero.
    public var flags: UInt8 {
        var flags = sensorContact.bits << Flag.contactShift
        if encodedFormat == .uint16 { flags |= Flag.valueFormatUInt16 }
        if energyExpended != nil { flags |= Flag.energyExpendedPresent }
        if !rrIntervals.isEmpty { flags |= Flag.rrIntervalsPresent }
        return flags
    }

    /// The format actually written: `uint16` when asked for, or when the value does not fit in a byte.
    public var encodedFormat: ValueFormat {
        format == .uint16 || heartRate > UInt16(UInt8.max) ? .uint16 : .uint8
    }

    /// Encodes the measurement as a 0x2A37 payload.
    ///
    /// Every RR interval is written; callers that must respect an ATT MTU limit the list with
    /// ``maximumRRIntervalCount(format:includesEnergyExpended:attMTU:)``. ``isTruncated`` is not encoded (a sender
    /// never cuts its own payload).
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1 + 2 + 2 + 2 * rrIntervals.count)
        bytes.append(flags)
        switch encodedFormat {
        case .uint8: bytes.append(UInt8(truncatingIfNeeded: heartRate))
        case .uint16: bytes.appendLittleEndian(heartRate)
        }
        if let energyExpended { bytes.appendLittleEndian(energyExpended) }
        for interval in rrIntervals { bytes.appendLittleEndian(interval.ticks) }
        return bytes
    }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }
}
