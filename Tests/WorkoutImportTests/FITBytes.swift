import FITFormat

/// FIT files put together byte by byte, for files no encoder would write: a 12-byte header, the records as given,
/// and the CRCs made right (or not) so that the decoder's other checks are reached.
struct FITBytes {
    var records: [UInt8] = []

    /// A definition of `global` for local type `local`: fields as (number, size, base type); the data messages
    /// that follow it are in big-endian order when `bigEndian`.
    mutating func define(_ local: UInt8, global: UInt16, _ fields: [(UInt8, UInt8, UInt8)], bigEndian: Bool = false) {
        let number =
            bigEndian ? [UInt8(global >> 8), UInt8(global & 0xFF)] : [UInt8(global & 0xFF), UInt8(global >> 8)]
        records += [0x40 | local, 0, bigEndian ? 1 : 0] + number + [UInt8(fields.count)]
        for field in fields { records += [field.0, field.1, field.2] }
    }

    /// A data message of local type `local` with its fields' bytes.
    mutating func data(_ local: UInt8, _ bytes: [UInt8]) { records += [local] + bytes }

    /// The file: header (with `dataSize` when given instead of the true size) and CRC.
    func file(dataSize: UInt32? = nil) -> [UInt8] {
        let size = dataSize ?? UInt32(records.count)
        var bytes: [UInt8] = [12, 0x20, 0x52, 0x54] + (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
        bytes += Array(".FIT".utf8) + records
        let crc = FITCRC.of(bytes)
        return bytes + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }

    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    static func le64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// FIT's seconds for a Unix time.
    static func time(_ unix: Double) -> [UInt8] { le32(UInt32(unix - 631_065_600)) }

    /// A minimal activity: file ID (activity), a session from `start` for `seconds`, and records of `bpm`.
    static func activity(start: Double = 1_790_000_000, seconds: Double = 60, bpm: [UInt8] = [90, 91]) -> FITBytes {
        var fit = FITBytes()
        fit.define(0, global: 0, [(0, 1, 0x00)])
        fit.data(0, [4])
        fit.define(1, global: 20, [(253, 4, 0x86), (3, 1, 0x02)])
        for (index, value) in bpm.enumerated() { fit.data(1, time(start + Double(index + 1)) + [value]) }
        fit.define(2, global: 18, [(253, 4, 0x86), (2, 4, 0x86), (7, 4, 0x86), (5, 1, 0x00)])
        fit.data(2, time(start + seconds) + time(start) + le32(UInt32(seconds * 1000)) + [1])
        return fit
    }
}
