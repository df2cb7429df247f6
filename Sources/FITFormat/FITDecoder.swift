/// One data message of a FIT file: its global message number and its fields' values as stored, by field number.
public struct FITMessage: Sendable {
    public var global: UInt16
    /// Each field's values (one for most fields, several for arrays such as `hrv.time`); nil for "no value".
    public var fields: [UInt8: [FITValue?]]
    /// String fields, by field number.
    public var strings: [UInt8: String]
    /// Where the message starts in the file, for errors that point at it.
    public var offset: Int

    /// The field's first value, if it has one.
    public func value(_ field: UInt8) -> Double? { fields[field]?.first.flatMap { $0?.double } }
}

/// What is wrong with a FIT file, and where.
public struct FITDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte the problem was found at.
    public var offset: Int
    public var reason: String

    public var description: String { "at byte \(offset): \(reason)" }
}

/// Reads a FIT file (the FIT SDK's "Flexible and Interoperable Data Transfer" protocol): the header, definition and
/// data messages (normal and compressed-timestamp headers, either byte order, developer fields skipped), and the
/// CRCs, for every FIT file chained in the bytes. Any inconsistency is an error with its byte offset: nothing of a
/// broken file is taken.
public enum FITDecoder {
    /// The largest file read: a day of one-second records is under 4 MB.
    public static let maximumSize = 64 << 20

    /// Hands each data message whose global number is in `wanted` to `body`, in file order, once the file's CRCs
    /// have been checked (each chained file's before its messages). Nothing is kept: memory does not grow with the
    /// file.
    public static func forEachMessage(
        in bytes: [UInt8],
        wanted: Set<UInt16>,
        _ body: (FITMessage) -> Void
    ) throws(FITDecodingError) {
        guard bytes.count <= maximumSize else {
            throw FITDecodingError(offset: 0, reason: "\(bytes.count) bytes is larger than a FIT activity can be")
        }
        var start = 0
        repeat {
            start = try decodeFile(bytes, at: start, wanted: wanted, body)
        } while start < bytes.count
    }

    private struct Definition {
        var global: UInt16
        var bigEndian: Bool
        var fields: [(number: UInt8, size: Int, type: FITBaseType)]
        /// Bytes of developer fields, skipped.
        var developerBytes: Int
    }

    /// Decodes the FIT file starting at `start`; returns where the next one would start.
    private static func decodeFile(
        _ bytes: [UInt8],
        at start: Int,
        wanted: Set<UInt16>,
        _ body: (FITMessage) -> Void
    ) throws(FITDecodingError) -> Int {
        let dataStart = try header(bytes, at: start)
        let dataSize =
            Int(bytes[start + 4]) | Int(bytes[start + 5]) << 8 | Int(bytes[start + 6]) << 16
            | Int(bytes[start + 7]) << 24
        let end = dataStart + dataSize
        guard end + 2 <= bytes.count else {
            throw FITDecodingError(
                offset: start + 4,
                reason: "the header says \(dataSize) bytes of messages and a CRC follow; the file has "
                    + "\(max(0, bytes.count - dataStart)) (truncated?)"
            )
        }
        let crc = FITCRC.of(bytes[start..<end])
        let stored = UInt16(bytes[end]) | UInt16(bytes[end + 1]) << 8
        guard crc == stored else {
            throw FITDecodingError(
                offset: end,
                reason: "the file's CRC is \(hex(stored)), its bytes give \(hex(crc)) (damaged or altered)"
            )
        }
        var reader = Reader(bytes: bytes, position: dataStart, end: end)
        try reader.readMessages(wanted: wanted, body)
        return end + 2
    }

    /// Checks the header at `start`; returns where its messages begin.
    private static func header(_ bytes: [UInt8], at start: Int) throws(FITDecodingError) -> Int {
        guard bytes.count - start >= 12 else {
            throw FITDecodingError(offset: start, reason: "\(bytes.count - start) bytes are too few for a FIT header")
        }
        let size = Int(bytes[start])
        guard size == 12 || size == 14, bytes.count - start >= size else {
            throw FITDecodingError(offset: start, reason: "a FIT header is 12 or 14 bytes, not \(size)")
        }
        guard Array(bytes[(start + 8)..<(start + 12)]) == Array(".FIT".utf8) else {
            throw FITDecodingError(offset: start + 8, reason: "not a FIT file (no \".FIT\" in the header)")
        }
        guard bytes[start + 1] >> 4 <= 2 else {
            throw FITDecodingError(
                offset: start + 1,
                reason: "FIT protocol version \(bytes[start + 1] >> 4) is unknown"
            )
        }
        if size == 14 {
            let stored = UInt16(bytes[start + 12]) | UInt16(bytes[start + 13]) << 8
            let computed = FITCRC.of(bytes[start..<(start + 12)])
            guard stored == 0 || stored == computed else {
                throw FITDecodingError(
                    offset: start + 12,
                    reason: "the header's CRC is \(hex(stored)), its bytes give \(hex(computed))"
                )
            }
        }
        return start + size
    }

    static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// Walks the records of one file.
    private struct Reader {
        let bytes: [UInt8]
        var position: Int
        let end: Int
        var definitions: [Definition?] = Array(repeating: nil, count: 16)
        var lastTimestamp: UInt32?

        mutating func take(
            _ count: Int,
            _ what: @autoclosure () -> String
        ) throws(FITDecodingError) -> ArraySlice<UInt8> {
            guard count <= end - position else {
                throw FITDecodingError(offset: position, reason: "\(what()) runs past the end of the messages")
            }
            defer { position += count }
            return bytes[position..<(position + count)]
        }

        mutating func readMessages(wanted: Set<UInt16>, _ body: (FITMessage) -> Void) throws(FITDecodingError) {
            while position < end {
                let offset = position
                let header = try take(1, "a record header").first!
                if header & 0x80 != 0 {
                    // A compressed timestamp header: a data message of local type 0–3, five bits of seconds.
                    let local = Int(header >> 5 & 0x03)
                    guard let previous = lastTimestamp else {
                        throw FITDecodingError(offset: offset, reason: "a compressed timestamp before any timestamp")
                    }
                    let seconds = UInt32(header & 0x1F)
                    var timestamp = previous & ~0x1F | seconds
                    if seconds < previous & 0x1F { timestamp &+= 0x20 }
                    try readData(local: local, offset: offset, timestamp: timestamp, wanted: wanted, body)
                } else if header & 0x40 != 0 {
                    try readDefinition(local: Int(header & 0x0F), developer: header & 0x20 != 0, offset: offset)
                } else {
                    try readData(
                        local: Int(header & 0x0F),
                        offset: offset,
                        timestamp: nil,
                        wanted: wanted,
                        body
                    )
                }
            }
        }

        mutating func readDefinition(local: Int, developer: Bool, offset: Int) throws(FITDecodingError) {
            let fixed = try take(5, "a definition message")
            let architecture = fixed[fixed.startIndex + 1]
            guard architecture <= 1 else {
                throw FITDecodingError(offset: offset + 2, reason: "byte order \(architecture) is neither 0 nor 1")
            }
            let bigEndian = architecture == 1
            let low = UInt16(fixed[fixed.startIndex + 2])
            let high = UInt16(fixed[fixed.startIndex + 3])
            let global = bigEndian ? low << 8 | high : high << 8 | low
            let count = Int(fixed[fixed.startIndex + 4])
            let raw = try take(3 * count, "a definition's \(count) fields")
            var fields: [(number: UInt8, size: Int, type: FITBaseType)] = []
            for index in 0..<count {
                let base = raw.startIndex + 3 * index
                let size = Int(raw[base + 1])
                guard size > 0 else {
                    throw FITDecodingError(offset: offset + 6 + 3 * index, reason: "field \(raw[base]) of 0 bytes")
                }
                fields.append((raw[base], size, FITBaseType(definitionByte: raw[base + 2])))
            }
            var developerBytes = 0
            if developer {
                let developerCount = Int(try take(1, "the developer field count").first!)
                let developerFields = try take(3 * developerCount, "\(developerCount) developer fields")
                for index in 0..<developerCount {
                    developerBytes += Int(developerFields[developerFields.startIndex + 3 * index + 1])
                }
            }
            definitions[local] = Definition(
                global: global,
                bigEndian: bigEndian,
                fields: fields,
                developerBytes: developerBytes
            )
        }

        mutating func readData(
            local: Int,
            offset: Int,
            timestamp: UInt32?,
            wanted: Set<UInt16>,
            _ body: (FITMessage) -> Void
        ) throws(FITDecodingError) {
            guard let definition = definitions[local] else {
                throw FITDecodingError(
                    offset: offset,
                    reason: "a data message of local type \(local) before its definition"
                )
            }
            var message = FITMessage(global: definition.global, fields: [:], strings: [:], offset: offset)
            for field in definition.fields {
                let raw = try take(field.size, "field \(field.number) of message \(definition.global)")
                guard wanted.contains(definition.global) || field.number == 253 else { continue }
                if field.type == .string {
                    let text = raw.prefix { $0 != 0 }
                    if !text.isEmpty { message.strings[field.number] = String(decoding: text, as: UTF8.self) }
                    continue
                }
                let size = field.size % field.type.size == 0 ? field.type.size : 1
                let type = size == field.type.size ? field.type : .byte
                let values = stride(from: raw.startIndex, to: raw.endIndex, by: size).map {
                    type.value(raw[$0..<($0 + size)], bigEndian: definition.bigEndian)
                }
                message.fields[field.number] = values
            }
            _ = try take(definition.developerBytes, "the developer fields of message \(definition.global)")
            if let stamp = message.fields[253]?.first, case .unsigned(let value)? = stamp {
                lastTimestamp = UInt32(truncatingIfNeeded: value)
            } else if let timestamp {
                message.fields[253] = [.unsigned(UInt64(timestamp))]
                lastTimestamp = timestamp
            }
            if wanted.contains(definition.global) { body(message) }
        }
    }
}
