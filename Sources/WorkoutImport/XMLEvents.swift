/// A small XML reader for the files systole imports (TCX): elements, attributes, text, comments, CDATA and the XML
/// declaration. A document type declaration is refused, so no entity is ever expanded (no "billion laughs", no
/// external files); only the five predefined entities and character references are decoded. Nesting is limited.
struct XMLEvents {
    enum Event: Equatable {
        /// An element's start, by its local name (the prefix dropped), with its attributes by local name.
        case start(String, [String: String])
        case end(String)
        case text(String)
    }

    struct Failure: Error, Equatable, CustomStringConvertible {
        var line: Int
        var reason: String
        var description: String { "line \(line): \(reason)" }
    }

    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var position = 0
    /// The line being read, for errors.
    private(set) var line = 1
    private var open: [String] = []
    private var rootClosed = false
    /// The end of an empty element (`<a/>`), reported after its start.
    private var pendingEnd: String?

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        // A UTF-8 byte order mark is allowed before the declaration.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// The next event, or nil at the end of a well-formed document.
    mutating func next() throws(Failure) -> Event? {
        if let end = pendingEnd {
            pendingEnd = nil
            if open.isEmpty { rootClosed = true }
            return .end(end)
        }
        while position < bytes.count {
            if bytes[position] != UInt8(ascii: "<") {
                let text = try decoded(readUntil(UInt8(ascii: "<")))
                if open.isEmpty {
                    guard text.allSatisfy(\.isWhitespace) else { throw fail("text outside the root element") }
                    continue
                }
                return .text(text)
            }
            if starts(with: "<!--") {
                try skip(past: "-->", what: "a comment")
            } else if starts(with: "<![CDATA[") {
                position += 9
                let start = position
                try skip(past: "]]>", what: "a CDATA section")
                return .text(String(decoding: bytes[start..<(position - 3)], as: UTF8.self))
            } else if starts(with: "<!") {
                throw fail("a document type declaration (refused: files to import have none)")
            } else if starts(with: "<?") {
                try skip(past: "?>", what: "a processing instruction")
            } else if starts(with: "</") {
                position += 2
                let name = try readName()
                skipSpace()
                try expect(">")
                guard let last = open.popLast(), last == name else { throw fail("</\(name)> closes nothing open") }
                if open.isEmpty { rootClosed = true }
                return .end(Self.local(name))
            } else {
                guard !open.isEmpty || !rootClosed else { throw fail("a second root element") }
                return try readStart()
            }
        }
        guard open.isEmpty else { throw fail("the file ends inside <\(open.last!)> (truncated?)") }
        return nil
    }

    private mutating func readStart() throws(Failure) -> Event {
        position += 1
        let name = try readName()
        var attributes: [String: String] = [:]
        while true {
            skipSpace()
            guard position < bytes.count else { throw fail("the file ends inside <\(name)> (truncated?)") }
            if starts(with: "/>") {
                position += 2
                // Reported as a start and, next time, its end.
                pendingEnd = Self.local(name)
                return .start(Self.local(name), attributes)
            }
            if bytes[position] == UInt8(ascii: ">") {
                position += 1
                guard open.count < Self.maximumDepth else {
                    throw fail("elements nested deeper than \(Self.maximumDepth)")
                }
                open.append(name)
                return .start(Self.local(name), attributes)
            }
            let attribute = try readName()
            skipSpace()
            try expect("=")
            skipSpace()
            guard position < bytes.count, bytes[position] == 0x22 || bytes[position] == 0x27 else {
                throw fail("attribute \(attribute) without a quoted value")
            }
            let quote = bytes[position]
            position += 1
            let value = try decoded(readUntil(quote))
            position += 1
            attributes[Self.local(attribute)] = value
        }
    }

    private static func local(_ name: String) -> String {
        name.split(separator: ":").last.map(String.init) ?? name
    }

    private func starts(with text: String) -> Bool {
        let prefix = Array(text.utf8)
        return bytes.count - position >= prefix.count && Array(bytes[position..<(position + prefix.count)]) == prefix
    }

    private mutating func skip(past end: String, what: String) throws(Failure) {
        let terminator = Array(end.utf8)
        while position < bytes.count {
            if bytes[position] == 0x0A { line += 1 }
            if bytes[position] == terminator[0], starts(with: end) {
                position += terminator.count
                return
            }
            position += 1
        }
        throw fail("the file ends inside \(what) (truncated?)")
    }

    private mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) {
            if bytes[position] == 0x0A { line += 1 }
            position += 1
        }
    }

    private mutating func expect(_ character: Character) throws(Failure) {
        guard position < bytes.count else { throw fail("the file ends inside a tag (truncated?)") }
        guard bytes[position] == character.asciiValue else {
            throw fail("expected '\(character)'")
        }
        position += 1
    }

    private mutating func readName() throws(Failure) -> String {
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            let isName =
                byte >= 0x80 || (byte >= 0x30 && byte <= 0x3A) || (byte >= 0x41 && byte <= 0x5A)
                || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x2E || byte == 0x5F
            guard isName else { break }
            position += 1
        }
        guard position < bytes.count else { throw fail("the file ends inside a tag (truncated?)") }
        guard position > start, position - start <= 256 else { throw fail("a name expected") }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private mutating func readUntil(_ terminator: UInt8) throws(Failure) -> ArraySlice<UInt8> {
        let start = position
        while position < bytes.count, bytes[position] != terminator {
            if bytes[position] == 0x0A { line += 1 }
            position += 1
        }
        if terminator != UInt8(ascii: "<"), position == bytes.count {
            throw fail("the file ends inside a value (truncated?)")
        }
        return bytes[start..<position]
    }

    /// Text with its entity and character references decoded.
    private func decoded(_ raw: ArraySlice<UInt8>) throws(Failure) -> String {
        let text = String(decoding: raw, as: UTF8.self)
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            guard let semicolon = rest[ampersand...].firstIndex(of: ";"),
                rest.distance(from: ampersand, to: semicolon) <= 10
            else { throw fail("an unfinished '&' reference") }
            let name = rest[rest.index(after: ampersand)..<semicolon]
            switch name {
            case "lt": result += "<"
            case "gt": result += ">"
            case "amp": result += "&"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let number: UInt32? =
                    name.hasPrefix("#x")
                    ? UInt32(name.dropFirst(2), radix: 16)
                    : name.hasPrefix("#") ? UInt32(name.dropFirst()) : nil
                guard let number, let scalar = Unicode.Scalar(number) else {
                    throw fail("the entity &\(name); (only XML's own five are known)")
                }
                result.unicodeScalars.append(scalar)
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }

    private func fail(_ reason: String) -> Failure { Failure(line: line, reason: reason) }
}
