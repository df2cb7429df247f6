import Foundation
import SafeText

/// The part of TOML systoled's configuration uses, read with the line of every value so an error can name it:
/// comments, `[table]` headers, `key = value` with basic and literal strings, integers (with `_`), floats,
/// booleans, and arrays of those (across lines, trailing comma allowed). Anything else is an error that says so.
enum TOML {
    enum Value: Equatable {
        case string(String)
        case integer(Int)
        case float(Double)
        case boolean(Bool)
        case array([Value])

        /// How the value is described in errors.
        var kind: String {
            switch self {
            case .string: "a string"
            case .integer: "an integer"
            case .float: "a number"
            case .boolean: "true or false"
            case .array: "an array"
            }
        }
    }

    /// One `key = value` line.
    struct Entry: Equatable {
        /// The `[table]` it is in ("" for the top level).
        var table: String
        var key: String
        var value: Value
        var line: Int
    }

    struct SyntaxError: Error, Equatable {
        var line: Int
        var reason: String
    }

    /// Parses `text`; keys defined twice and tables opened twice are errors.
    static func parse(_ text: String) throws(SyntaxError) -> [Entry] {
        var parser = Parser(text)
        return try parser.document()
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var depth = 0
        static let maximumDepth = 8

        init(_ text: String) { bytes = Array(text.utf8) }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        func error(_ reason: String) -> SyntaxError { SyntaxError(line: line, reason: reason) }

        mutating func advance() {
            if current == UInt8(ascii: "\n") { line += 1 }
            index += 1
        }

        mutating func skipSpaces() {
            while let c = current, c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") { advance() }
        }

        /// Skips spaces, newlines and comments (inside arrays).
        mutating func skipBlank() {
            while let c = current {
                if c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\n")
                    || c == UInt8(ascii: "\r")
                {
                    advance()
                } else if c == UInt8(ascii: "#") {
                    while let c = current, c != UInt8(ascii: "\n") { advance() }
                } else {
                    return
                }
            }
        }

        /// After a value or header: only spaces and a comment may follow on the line.
        mutating func endOfLine() throws(SyntaxError) {
            skipSpaces()
            if current == UInt8(ascii: "#") {
                while let c = current, c != UInt8(ascii: "\n") { advance() }
            }
            if current == UInt8(ascii: "\r") { advance() }
            guard current == nil || current == UInt8(ascii: "\n") else {
                throw error("unexpected text after the value; put one setting per line")
            }
        }

        mutating func document() throws(SyntaxError) -> [Entry] {
            var entries: [Entry] = []
            var table = ""
            var seenTables: Set<String> = [""]
            var seenKeys: Set<String> = []
            while true {
                skipBlank()
                guard let c = current else { break }
                if c == UInt8(ascii: "[") {
                    advance()
                    if current == UInt8(ascii: "[") { throw error("arrays of tables ([[…]]) are not used here") }
                    skipSpaces()
                    let name = try key()
                    skipSpaces()
                    if current == UInt8(ascii: ".") { throw error("nested tables are not used here") }
                    guard current == UInt8(ascii: "]") else { throw error("a table header ends with ']'") }
                    advance()
                    try endOfLine()
                    guard seenTables.insert(name).inserted else { throw error("table [\(name)] appears twice") }
                    table = name
                    continue
                }
                let startLine = line
                let name = try key()
                skipSpaces()
                if current == UInt8(ascii: ".") {
                    throw error("dotted keys are not used here; put '\(name)' settings under a [\(name)] table")
                }
                guard current == UInt8(ascii: "=") else { throw error("expected '=' after '\(name)'") }
                advance()
                skipSpaces()
                let value = try self.value()
                try endOfLine()
                let qualified = table.isEmpty ? name : table + "." + name
                guard seenKeys.insert(qualified).inserted else {
                    throw SyntaxError(line: startLine, reason: "'\(name)' is set twice")
                }
                entries.append(Entry(table: table, key: name, value: value, line: startLine))
            }
            return entries
        }

        mutating func key() throws(SyntaxError) -> String {
            if current == UInt8(ascii: "\"") {
                // Errors repeat a key back: keep it short and printable.
                let name = try basicString()
                guard name.utf8.count <= 64,
                    !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                else { throw error("a quoted setting name must be at most 64 printable characters") }
                return name
            }
            var name: [UInt8] = []
            while let c = current,
                (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                    || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_")
                    || c == UInt8(ascii: "-")
            {
                name.append(c)
                advance()
            }
            guard !name.isEmpty else { throw error("expected a setting name (letters, digits, '_' or '-')") }
            guard name.count <= 64 else { throw error("a setting name is at most 64 characters long") }
            return String(decoding: name, as: UTF8.self)
        }

        mutating func value() throws(SyntaxError) -> Value {
            guard let c = current, c != UInt8(ascii: "\n") else { throw error("a value is missing after '='") }
            switch c {
            case UInt8(ascii: "\""): return .string(try basicString())
            case UInt8(ascii: "'"): return .string(try literalString())
            case UInt8(ascii: "["): return try array()
            default: return try bare()
            }
        }

        mutating func array() throws(SyntaxError) -> Value {
            // Every nested array is a level of recursion: a file of `[[[[…` must end in an error, not a crash.
            guard depth < Self.maximumDepth else {
                throw error("arrays nest more than \(Self.maximumDepth) deep; no setting uses nested arrays")
            }
            depth += 1
            defer { depth -= 1 }
            advance()
            var values: [Value] = []
            while true {
                skipBlank()
                if current == UInt8(ascii: "]") {
                    advance()
                    return .array(values)
                }
                guard current != nil else { throw error("an array is not closed with ']'") }
                values.append(try value())
                skipBlank()
                if current == nil {
                    throw error("an array is not closed with ']'")
                } else if current == UInt8(ascii: ",") {
                    advance()
                } else if current != UInt8(ascii: "]") {
                    throw error("array values are separated by ','")
                }
            }
        }

        mutating func basicString() throws(SyntaxError) -> String {
            advance()
            if current == UInt8(ascii: "\""), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\"") {
                throw error("multi-line strings are not used here")
            }
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw = []
            }
            while true {
                guard let c = current, c != UInt8(ascii: "\n") else { throw error("a string is not closed with '\"'") }
                advance()
                if c == UInt8(ascii: "\"") { break }
                guard c == UInt8(ascii: "\\") else {
                    raw.append(c)
                    continue
                }
                flush()
                guard let escape = current else { throw error("a string is not closed with '\"'") }
                advance()
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "u"), UInt8(ascii: "U"):
                    let length = escape == UInt8(ascii: "u") ? 4 : 8
                    var hex: [UInt8] = []
                    for _ in 0..<length {
                        guard let h = current else { break }
                        hex.append(h)
                        advance()
                    }
                    guard let code = UInt32(String(decoding: hex, as: UTF8.self), radix: 16),
                        let scalar = Unicode.Scalar(code)
                    else { throw error("'\\\(Character(Unicode.Scalar(escape)))' needs \(length) hex digits") }
                    scalars.append(scalar)
                default:
                    throw error("unknown escape '\\\(Character(Unicode.Scalar(escape)))' in a string")
                }
            }
            flush()
            return String(scalars)
        }

        mutating func literalString() throws(SyntaxError) -> String {
            advance()
            var raw: [UInt8] = []
            while true {
                guard let c = current, c != UInt8(ascii: "\n") else { throw error("a string is not closed with \"'\"") }
                advance()
                if c == UInt8(ascii: "'") { break }
                raw.append(c)
            }
            return String(decoding: raw, as: UTF8.self)
        }

        /// true, false, an integer or a float.
        mutating func bare() throws(SyntaxError) -> Value {
            var raw: [UInt8] = []
            while let c = current, c != UInt8(ascii: ","), c != UInt8(ascii: "]"), c != UInt8(ascii: "#"),
                c != UInt8(ascii: " "), c != UInt8(ascii: "\t"), c != UInt8(ascii: "\n"), c != UInt8(ascii: "\r")
            {
                raw.append(c)
                advance()
            }
            let text = String(decoding: raw, as: UTF8.self)
            if text == "true" { return .boolean(true) }
            if text == "false" { return .boolean(false) }
            let digits = text.replacingOccurrences(of: "_", with: "")
            if let integer = Int(digits) { return .integer(integer) }
            if let float = Double(digits), digits.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                return .float(float)
            }
            throw error("\(text.quotedExcerpt()) is not a value: strings need quotes")
        }
    }
}
