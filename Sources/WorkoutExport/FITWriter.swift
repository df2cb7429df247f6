import FITFormat
import Foundation

/// Writes a FIT file (the Flexible and Interoperable Data Transfer protocol of Garmin's FIT SDK): a 14-byte header,
/// definition and data messages, and the file CRC. Little-endian throughout; one local message type per global
/// message, defined before its first data message. Written as it goes (``init(dataSize:sink:)``), or only counted
/// (``init()``), since the header needs the size of what follows.
struct FITWriter {
    /// FIT's base types.
    typealias BaseType = FITBaseType

    /// One field of a message: its number in the profile, base type and count (arrays and strings).
    struct Field: Hashable {
        var number: UInt8
        var type: BaseType
        var count = 1
        var byteCount: Int { type.size * count }
    }

    /// The seconds between the Unix epoch and FIT's (1989-12-31T00:00:00Z).
    static let epochOffset: TimeInterval = 631_065_600
    /// The FIT SDK profile version these messages follow, as the SDK writes it: major × 1000 + minor (21.218).
    static let profileVersion: UInt16 = 21_218

    /// Where the file goes; nil when the messages are only counted.
    private var output: ExportOutput?
    /// The bytes of the messages so far: the header's data size once all are written.
    private(set) var dataSize = 0
    /// The file CRC of what was written so far.
    private var crc: UInt16 = 0
    /// One message's bytes, kept for the next one.
    private var scratch: [UInt8] = []
    private var definitions: [Key: UInt8] = [:]

    /// A writer that only counts the messages' bytes.
    init() {}

    /// A writer of a file whose messages come to `dataSize` bytes: it writes the header at once.
    init(dataSize: Int, sink: @escaping ExportSink) {
        var header: [UInt8] = [14, 0x20]
        header += [UInt8(Self.profileVersion & 0xFF), UInt8(Self.profileVersion >> 8)]
        let size = UInt32(clamping: dataSize)
        header += [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: size >> UInt32($0)) }
        header += Array(".FIT".utf8)
        let headerCRC = FITCRC.of(header)
        header += [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8)]
        var output = ExportOutput(sink)
        output.append(header)
        crc = FITCRC.of(header)
        self.output = output
    }

    private struct Key: Hashable {
        var global: UInt16
        var fields: [Field]
    }

    /// A FIT timestamp: whole seconds since FIT's epoch.
    static func timestamp(_ date: Date) -> UInt64 {
        UInt64(max(0, (date.timeIntervalSince1970 - epochOffset).rounded(.down)))
    }

    /// Appends a data message of global message `global` with `values` (one per field; arrays give `count`
    /// values), writing its definition first when this layout is new.
    mutating func message(_ global: UInt16, _ fields: [(Field, [UInt64])]) {
        scratch.removeAll(keepingCapacity: true)
        let key = Key(global: global, fields: fields.map(\.0))
        let local: UInt8
        if let known = definitions[key] {
            local = known
        } else {
            // Sixteen local types; a layout beyond them takes over the slot it maps to (and is defined again).
            local = UInt8(definitions.count % 16)
            definitions = definitions.filter { $0.value != local }
            definitions[key] = local
            scratch.append(0x40 | local)
            scratch += [0, 0]  // reserved, little-endian
            append(UInt64(global), size: 2)
            scratch.append(UInt8(fields.count))
            for (field, _) in fields {
                scratch += [field.number, UInt8(field.byteCount), field.type.rawValue]
            }
        }
        scratch.append(local)
        for (field, values) in fields {
            for index in 0..<field.count {
                let value = index < values.count ? values[index] : field.type.invalid
                append(value, size: field.type.size)
            }
        }
        dataSize += scratch.count
        if output != nil {
            crc = FITCRC.of(scratch, startingAt: crc)
            output?.append(scratch)
        }
    }

    /// Appends a string field's bytes (UTF-8, cut to `count - 1` bytes and NUL-padded).
    static func stringValues(_ text: String, count: Int) -> [UInt64] {
        // Cut at the end of a character, never inside one's UTF-8 bytes, leaving room for the terminating zero.
        var bytes: [UInt8] = []
        for character in text {
            let utf8 = Array(String(character).utf8)
            guard bytes.count + utf8.count <= count - 1 else { break }
            bytes += utf8
        }
        while bytes.count < count { bytes.append(0) }
        return bytes.map(UInt64.init)
    }

    private mutating func append(_ value: UInt64, size: Int) {
        for shift in 0..<size { scratch.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(shift)))) }
    }

    /// Ends the file with its CRC, and passes on what is left; throws the sink's first error.
    mutating func finish() throws {
        guard var output else { return }
        output.append([UInt8(crc & 0xFF), UInt8(crc >> 8)])
        try output.finish()
        self.output = nil
    }
}
