/// A complete D-Bus type, as one element of a signature describes it.
// Indirect only where a type holds a type directly (see `DBusValue`).
public enum DBusType: Hashable, Sendable, CustomStringConvertible {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double, string, objectPath, signature
    case unixFD
    case variant
    /// `aT`
    indirect case array(DBusType)
    /// `{KV}`, only valid as the element of an array; the key is a basic type.
    indirect case dictEntry(key: DBusType, value: DBusType)
    /// `(T…)`, at least one field.
    case structure([DBusType])

    /// The type's signature text (`a{sv}`).
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array(let element): "a" + element.signature
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    public var description: String { signature }

    /// Whether this is a basic (non-container) type, the only kind allowed as a dict key.
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictEntry, .structure: false
        default: true
        }
    }

    /// `a{sv}`, the property map BlueZ uses everywhere.
    public static let propertyMap = DBusType.array(.dictEntry(key: .string, value: .variant))

    /// Parses a signature holding zero or more complete types ("", "s", "a{sv}as").
    public static func parse(signature: String) throws(DBusError) -> [DBusType] {
        var scalars = Array(signature.utf8)[...]
        var types: [DBusType] = []
        while !scalars.isEmpty {
            types.append(try parseOne(&scalars, depth: 0, in: signature))
        }
        return types
    }

    /// Parses a signature that must hold exactly one complete type.
    public init(signature: String) throws(DBusError) {
        let types = try DBusType.parse(signature: signature)
        guard types.count == 1 else {
            throw DBusError(.invalidSignature, "'\(signature)' is not a single complete type")
        }
        self = types[0]
    }

    /// The type one type code stands for by itself (the basic types and variant), or nil for a container's code.
    /// A message iterator reports type codes as these same characters.
    static func single(code: UInt8) -> DBusType? {
        switch code {
        case UInt8(ascii: "y"): .byte
        case UInt8(ascii: "b"): .boolean
        case UInt8(ascii: "n"): .int16
        case UInt8(ascii: "q"): .uint16
        case UInt8(ascii: "i"): .int32
        case UInt8(ascii: "u"): .uint32
        case UInt8(ascii: "x"): .int64
        case UInt8(ascii: "t"): .uint64
        case UInt8(ascii: "d"): .double
        case UInt8(ascii: "s"): .string
        case UInt8(ascii: "o"): .objectPath
        case UInt8(ascii: "g"): .signature
        case UInt8(ascii: "h"): .unixFD
        case UInt8(ascii: "v"): .variant
        default: nil
        }
    }

    private static func parseOne(
        _ text: inout ArraySlice<UInt8>,
        depth: Int,
        in whole: String
    ) throws(DBusError) -> DBusType {
        // The spec allows 32 levels of arrays plus 32 of structs; one combined limit is enough to stay safe.
        guard depth < 64 else { throw DBusError(.invalidSignature, "'\(whole)' nests too deeply") }
        guard let code = text.popFirst() else {
            throw DBusError(.invalidSignature, "'\(whole)' ends in the middle of a type")
        }
        if let type = single(code: code) { return type }
        switch code {
        case UInt8(ascii: "a"):
            if text.first == UInt8(ascii: "{") {
                text.removeFirst()
                let key = try parseOne(&text, depth: depth + 1, in: whole)
                guard key.isBasic else {
                    throw DBusError(.invalidSignature, "'\(whole)': a dict key must be a basic type")
                }
                let value = try parseOne(&text, depth: depth + 1, in: whole)
                guard text.popFirst() == UInt8(ascii: "}") else {
                    throw DBusError(.invalidSignature, "'\(whole)': a dict entry holds exactly a key and a value")
                }
                return .array(.dictEntry(key: key, value: value))
            }
            return .array(try parseOne(&text, depth: depth + 1, in: whole))
        case UInt8(ascii: "("):
            var fields: [DBusType] = []
            while text.first != UInt8(ascii: ")") {
                guard !text.isEmpty else { throw DBusError(.invalidSignature, "'\(whole)': unclosed '('") }
                fields.append(try parseOne(&text, depth: depth + 1, in: whole))
            }
            text.removeFirst()
            guard !fields.isEmpty else { throw DBusError(.invalidSignature, "'\(whole)': empty struct") }
            return .structure(fields)
        default:
            let character = Character(Unicode.Scalar(code))
            throw DBusError(.invalidSignature, "'\(whole)': '\(character)' is not a D-Bus type code")
        }
    }
}
