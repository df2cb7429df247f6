/// One accelerometer sample in milli-g.
public struct PMDAcceleration: Hashable, Sendable {
    public var x: Int32
    public var y: Int32
    public var z: Int32

    public init(x: Int32, y: Int32, z: Int32) {
        self.x = x
        self.y = y
        self.z = z
    }
}

/// The samples of one frame, oldest first; the last was taken at the frame's ``PMDFrame/sensorTimestamp``.
public enum PMDSamples: Hashable, Sendable {
    /// ECG in µV.
    case ecg([Int32])
    /// Acceleration in milli-g.
    case acceleration([PMDAcceleration])

    /// How many samples the frame held.
    public var count: Int {
        switch self {
        case .ecg(let values): values.count
        case .acceleration(let values): values.count
        }
    }
}

extension PMDFrame {
    /// Reads the samples. `factor` is the FACTOR of the start answer: compressed accelerometer values are scaled by
    /// it (layout 0 carries G, scaled further to milli-g, as Polar's SDK does); raw layouts ignore it.
    ///
    /// Reads ECG layout 0 (3-byte µV, what an H10 sends) and accelerometer layouts 0–2 raw (1, 2 or 3 bytes per axis)
    /// and 0–1 compressed; anything else throws `.unsupported`. Never reads outside the frame.
    public func samples(factor: Float = 1) throws(PMDFrameError) -> PMDSamples {
        switch (type, isCompressed, layout) {
        case (.ecg, false, 0):
            return .ecg(try rawChannels(channels: 1, width: 3).map { $0[0] })
        case (.acceleration, false, 0...2):
            let axes = try rawChannels(channels: 3, width: Int(layout) + 1)
            return .acceleration(axes.map { PMDAcceleration(x: $0[0], y: $0[1], z: $0[2]) })
        case (.acceleration, true, 0...1):
            let scale = layout == 0 ? factor * 1000 : factor
            let axes = try deltaChannels(channels: 3, resolution: 16)
            return .acceleration(
                axes.map { axis in
                    func scaled(_ value: Int32) -> Int32 {
                        guard scale != 1 else { return value }
                        let product = (Float(value) * scale).rounded(.towardZero)
                        return product.magnitude < 2_147_483_520 ? Int32(product) : (product < 0 ? .min : .max)
                    }
                    return PMDAcceleration(x: scaled(axis[0]), y: scaled(axis[1]), z: scaled(axis[2]))
                }
            )
        default:
            throw PMDFrameError(
                .unsupported(type, layout: layout, compressed: isCompressed),
                offset: Self.headerLength - 1,
                length: Self.headerLength + content.count
            )
        }
    }

    /// Samples of `channels` signed little-endian values of `width` bytes each.
    private func rawChannels(channels: Int, width: Int) throws(PMDFrameError) -> [[Int32]] {
        let sampleBytes = channels * width
        guard content.count % sampleBytes == 0 else {
            throw PMDFrameError(
                .partialSample(sampleBytes: sampleBytes),
                offset: Self.headerLength + content.count - content.count % sampleBytes,
                length: Self.headerLength + content.count
            )
        }
        var reader = PMDByteReader(content)
        var samples: [[Int32]] = []
        samples.reserveCapacity(content.count / sampleBytes)
        while reader.remaining > 0 {
            var sample: [Int32] = []
            for _ in 0..<channels { sample.append(reader.readSigned(width: width) ?? 0) }
            samples.append(sample)
        }
        return samples
    }

    /// A reference sample of `channels` values of ⌈resolution/8⌉ bytes, then blocks of
    /// `[bit width u8][count u8][count × channels deltas, bits least-significant first]`.
    private func deltaChannels(channels: Int, resolution: Int) throws(PMDFrameError) -> [[Int32]] {
        let length = Self.headerLength + content.count
        var reader = PMDByteReader(content)
        var previous: [Int32] = []
        for _ in 0..<channels {
            guard let value = reader.readSigned(width: (resolution + 7) / 8) else {
                throw PMDFrameError(.partialSample(sampleBytes: channels * 2), offset: length, length: length)
            }
            previous.append(value)
        }
        var samples = [previous]
        while reader.remaining > 0 {
            let blockOffset = Self.headerLength + reader.offset
            guard let width = reader.readUInt8().map(Int.init), let count = reader.readUInt8().map(Int.init) else {
                throw PMDFrameError(.deltaBlockCut(neededBits: 0), offset: blockOffset, length: length)
            }
            guard (1...32).contains(width) else {
                throw PMDFrameError(.deltaWidth(width), offset: blockOffset, length: length)
            }
            let bits = width * count * channels
            guard let block = reader.readBytes((bits + 7) / 8) else {
                throw PMDFrameError(.deltaBlockCut(neededBits: bits), offset: blockOffset, length: length)
            }
            var bitReader = DeltaBitReader(block)
            for _ in 0..<count {
                var next = previous
                for channel in 0..<channels {
                    let (sum, overflow) = previous[channel].addingReportingOverflow(bitReader.read(width: width))
                    guard !overflow else { throw PMDFrameError(.sampleOverflow, offset: blockOffset, length: length) }
                    next[channel] = sum
                }
                samples.append(next)
                previous = next
            }
        }
        return samples
    }
}

/// Reads signed deltas of any width from 1 to 32 bits, least-significant bit first, from a block known to hold them.
private struct DeltaBitReader {
    private let bytes: ArraySlice<UInt8>
    private var bit = 0

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    mutating func read(width: Int) -> Int32 {
        var value: UInt64 = 0
        for index in 0..<width {
            let byte = bytes[bytes.startIndex + (bit + index) / 8]
            value |= UInt64((byte >> UInt8((bit + index) % 8)) & 1) << UInt64(index)
        }
        bit += width
        // Sign-extend from `width` bits.
        let shift = UInt64(64 - width)
        return Int32(truncatingIfNeeded: Int64(bitPattern: value << shift) >> Int64(shift))
    }
}
