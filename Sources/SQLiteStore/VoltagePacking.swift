import Foundation

/// ECG voltages (whole µV) packed for the store: each value's difference from the one before (the first from 0),
/// zigzag-mapped so small changes of either sign are small numbers, as LEB128 varints.
///
/// An ECG sampled at 130 Hz changes by less than 64 µV between most samples, which is one byte; the QRS complex's
/// steep edges take two. An H10's 3-byte sample costs about 1.1 to 1.2 bytes stored (docs/performance.md).
enum VoltagePacking {
    static func pack(_ values: [Int32]) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.count + values.count / 4 + 8)
        var previous: Int64 = 0
        for value in values {
            let delta = Int64(value) - previous
            previous = Int64(value)
            var zigzag = UInt64(bitPattern: (delta << 1) ^ (delta >> 63))
            while zigzag >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: zigzag) | 0x80)
                zigzag >>= 7
            }
            bytes.append(UInt8(zigzag))
        }
        return Data(bytes)
    }

    /// Why packed voltages could not be read: only something other than systole writes such bytes.
    struct Unreadable: Error, Equatable, CustomStringConvertible {
        var offset: Int
        var description: String { "packed voltages cut or out of range at byte \(offset)" }
    }

    static func unpack(_ data: Data) throws(Unreadable) -> [Int32] {
        var values: [Int32] = []
        values.reserveCapacity(data.count)
        var previous: Int64 = 0
        var zigzag: UInt64 = 0
        var shift: UInt64 = 0
        for (offset, byte) in data.enumerated() {
            // A 33-bit delta needs five bytes at most.
            guard shift < 35 else { throw Unreadable(offset: offset) }
            zigzag |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 != 0 {
                shift += 7
                continue
            }
            let delta = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
            let value = previous + delta
            guard let narrow = Int32(exactly: value) else { throw Unreadable(offset: offset) }
            values.append(narrow)
            previous = value
            zigzag = 0
            shift = 0
        }
        guard shift == 0 else { throw Unreadable(offset: data.count) }
        return values
    }
}
