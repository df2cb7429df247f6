/// A bounds-checked little-endian cursor over a byte collection: every read returns nil instead of reading past
/// the end, which is what lets the decoders promise never to crash on a malformed payload.
struct ByteReader<Bytes: Collection> where Bytes.Element == UInt8 {
    private let bytes: Bytes
    private var index: Bytes.Index
    /// Bytes consumed so far.
    private(set) var offset = 0
    /// Total length of the payload.
    let count: Int

    init(_ bytes: Bytes) {
        self.bytes = bytes
        self.index = bytes.startIndex
        self.count = bytes.count
    }

    /// Bytes not yet consumed.
    var remaining: Int { count - offset }

    mutating func readUInt8() -> UInt8? {
        guard index != bytes.endIndex else { return nil }
        defer {
            bytes.formIndex(after: &index)
            offset += 1
        }
        return bytes[index]
    }

    /// Reads two bytes, or consumes nothing when fewer than two remain.
    mutating func readUInt16() -> UInt16? {
        guard remaining >= 2, let low = readUInt8(), let high = readUInt8() else { return nil }
        return UInt16(low) | UInt16(high) << 8
    }

    mutating func skipRemaining() {
        index = bytes.endIndex
        offset = count
    }
}
