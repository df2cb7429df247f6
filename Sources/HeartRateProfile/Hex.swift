/// Hex text for payloads: what logs, the simulator's emit log and `systole decode` use.
public enum Hex {
    /// Why hex text could not be turned into bytes.
    public enum ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// A character that is neither a hex digit nor an allowed separator, at this character position
        /// (0-based, counted in the text as given).
        case invalidCharacter(Character, position: Int)
        /// The digits do not pair up into bytes.
        case oddDigitCount(Int)

        public var description: String {
            switch self {
            case .invalidCharacter(let character, let position):
                "invalid hex: \(Self.quoted(character)) at position \(position) is not a hex digit (use 0-9, a-f; spaces and colons may separate bytes)"
            case .oddDigitCount(let count):
                "invalid hex: \(count) hex digits do not make whole bytes (each byte is two digits, e.g. 06 48)"
            }
        }

        private static func quoted(_ character: Character) -> String {
            character.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F })
                ? "'\(character)'" : "U+" + String(character.unicodeScalars.first!.value, radix: 16, uppercase: true)
        }
    }

    /// Upper-case hex digits, no separators ("164854").
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let digits: [UInt8] = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Parses hex digits in either case. Spaces, tabs, colons and dashes between bytes are ignored
    /// ("16 48 54", "16:48:54", "164854"); an optional leading "0x" is accepted.
    public static func decode(_ text: String) throws(ParseError) -> [UInt8] {
        var bytes: [UInt8] = []
        var pending: UInt8?
        var digitCount = 0
        var characters = Array(text)
        var positionOffset = 0
        if characters.count >= 2, characters[0] == "0", characters[1] == "x" || characters[1] == "X" {
            characters.removeFirst(2)
            positionOffset = 2
        }
        for (position, character) in characters.enumerated() {
            if character == " " || character == "\t" || character == ":" || character == "-" { continue }
            guard let value = character.hexDigitValue, character.isASCII else {
                throw .invalidCharacter(character, position: position + positionOffset)
            }
            digitCount += 1
            if let high = pending {
                bytes.append(high << 4 | UInt8(value))
                pending = nil
            } else {
                pending = UInt8(value)
            }
        }
        guard pending == nil else { throw .oddDigitCount(digitCount) }
        return bytes
    }
}
