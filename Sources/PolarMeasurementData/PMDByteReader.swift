/// A bounds-checked little-endian cursor over PMD bytes. Every read returns nil rather than read past the end, so
/// no frame, however malformed, makes a decoder read outside its bytes.
struct PMDByteReader {
    private let bytes: [UInt8]
    /// Bytes consumed so far.
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var count: Int { bytes.count }
    var remaining: Int { bytes.count - offset }

    mutating func readUInt8() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// An unsigned little-endian integer of `width` bytes (1–8), or nil (consuming nothing) when fewer remain.
    mutating func readUnsigned(width: Int) -> UInt64? {
        guard width >= 1, width <= 8, remaining >= width else { return nil }
        var value: UInt64 = 0
        for index in 0..<width { value |= UInt64(bytes[offset + index]) << (8 * index) }
        offset += width
        return value
    }

    /// A two's-complement little-endian integer of `width` bytes (1–4), sign-extended.
    mutating func readSigned(width: Int) -> Int32? {
        guard width <= 4, let raw = readUnsigned(width: width) else { return nil }
        let shift = 64 - 8 * width
        return Int32(truncatingIfNeeded: Int64(bitPattern: raw << UInt64(shift)) >> Int64(shift))
    }

    /// The next `count` bytes, or nil (consuming nothing) when fewer remain.
    mutating func readBytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    /// Everything not yet consumed.
    mutating func readRest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}
