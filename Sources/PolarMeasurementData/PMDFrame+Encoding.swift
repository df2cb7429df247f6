extension PMDFrame {
    /// An ECG frame as an H10 sends it: layout 0, 3-byte little-endian µV (values outside 24 bits are clamped).
    public static func ecg(sensorTimestamp: UInt64, microvolts: [Int32]) -> PMDFrame {
        var content: [UInt8] = []
        content.reserveCapacity(microvolts.count * 3)
        for value in microvolts {
            let clamped = min(max(value, -8_388_608), 8_388_607)
            for index in 0..<3 { content.append(UInt8(truncatingIfNeeded: clamped >> Int32(8 * index))) }
        }
        return PMDFrame(type: .ecg, sensorTimestamp: sensorTimestamp, layout: 0, isCompressed: false, content: content)
    }

    /// An accelerometer frame, raw layout 1 (int16 per axis, milli-g; values outside 16 bits are clamped).
    public static func acceleration(sensorTimestamp: UInt64, samples: [PMDAcceleration]) -> PMDFrame {
        var content: [UInt8] = []
        content.reserveCapacity(samples.count * 6)
        for sample in samples {
            for axis in [sample.x, sample.y, sample.z] {
                let clamped = Int16(clamping: axis)
                content.append(UInt8(truncatingIfNeeded: clamped))
                content.append(UInt8(truncatingIfNeeded: clamped >> 8))
            }
        }
        return PMDFrame(
            type: .acceleration,
            sensorTimestamp: sensorTimestamp,
            layout: 1,
            isCompressed: false,
            content: content
        )
    }

    /// An accelerometer frame, compressed layout 1: the first sample as reference (int16 per axis), then one block of
    /// deltas as narrow as the largest change needs. `samples` must not be empty; values are clamped to 16 bits.
    public static func compressedAcceleration(sensorTimestamp: UInt64, samples: [PMDAcceleration]) -> PMDFrame {
        let axes = samples.map {
            [Int32(Int16(clamping: $0.x)), Int32(Int16(clamping: $0.y)), Int32(Int16(clamping: $0.z))]
        }
        var content: [UInt8] = []
        for value in axes.first ?? [0, 0, 0] {
            content.append(UInt8(truncatingIfNeeded: value))
            content.append(UInt8(truncatingIfNeeded: value >> 8))
        }
        let deltas = zip(axes.dropFirst(), axes).map { next, previous in zip(next, previous).map { $0 - $1 } }
        // A block counts its samples in one byte.
        for start in stride(from: 0, to: deltas.count, by: 255) {
            let block = deltas[start..<min(start + 255, deltas.count)].flatMap { $0 }
            let width = block.map(Self.bitsNeeded).max() ?? 1
            content.append(UInt8(width))
            content.append(UInt8(block.count / 3))
            var bits = BitWriter()
            for delta in block { bits.append(delta, width: width) }
            content += bits.bytes
        }
        return PMDFrame(
            type: .acceleration,
            sensorTimestamp: sensorTimestamp,
            layout: 1,
            isCompressed: true,
            content: content
        )
    }

    /// Bits a two's-complement value needs.
    private static func bitsNeeded(_ value: Int32) -> Int {
        let magnitude = value < 0 ? ~value : value
        return 33 - magnitude.leadingZeroBitCount
    }
}

/// Packs values of a given width, least-significant bit first.
private struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var used = 0

    mutating func append(_ value: Int32, width: Int) {
        for index in 0..<width {
            if used % 8 == 0 { bytes.append(0) }
            let bit = UInt8((UInt32(bitPattern: value) >> UInt32(index)) & 1)
            bytes[bytes.count - 1] |= bit << UInt8(used % 8)
            used += 1
        }
    }
}
