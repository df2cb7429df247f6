/// A FIT base type (the FIT SDK's profile, "Base Types"): its size and the value that means "no value".
public enum FITBaseType: UInt8, Sendable {
    case enumeration = 0x00
    case sint8 = 0x01
    case uint8 = 0x02
    case sint16 = 0x83
    case uint16 = 0x84
    case sint32 = 0x85
    case uint32 = 0x86
    case string = 0x07
    case float32 = 0x88
    case float64 = 0x89
    case uint8z = 0x0A
    case uint16z = 0x8B
    case uint32z = 0x8C
    case byte = 0x0D
    case sint64 = 0x8E
    case uint64 = 0x8F
    case uint64z = 0x90

    /// Bytes per value.
    public var size: Int {
        switch self {
        case .enumeration, .sint8, .uint8, .string, .uint8z, .byte: 1
        case .sint16, .uint16, .uint16z: 2
        case .sint32, .uint32, .float32, .uint32z: 4
        case .float64, .sint64, .uint64, .uint64z: 8
        }
    }

    /// The stored value that means "no value" (all bits of the type's size, for the signed types the largest
    /// positive value, for the `z` types and strings zero).
    public var invalid: UInt64 {
        switch self {
        case .enumeration, .uint8, .byte: 0xFF
        case .uint16: 0xFFFF
        case .uint32, .float32: 0xFFFF_FFFF
        case .uint64, .float64: .max
        case .sint8: 0x7F
        case .sint16: 0x7FFF
        case .sint32: 0x7FFF_FFFF
        case .sint64: 0x7FFF_FFFF_FFFF_FFFF
        case .uint8z, .uint16z, .uint32z, .uint64z, .string: 0
        }
    }

    /// A type from a definition's base-type byte: the low five bits name it (the top bit only says whether it
    /// has an endianness). Unknown numbers read as bytes, as the SDK's decoder does.
    init(definitionByte: UInt8) {
        let number = definitionByte & 0x1F
        self = Self.allByNumber[Int(number)] ?? .byte
    }

    private static let allByNumber: [Int: FITBaseType] = Dictionary(
        uniqueKeysWithValues: [
            FITBaseType.enumeration, .sint8, .uint8, .sint16, .uint16, .sint32, .uint32, .string, .float32, .float64,
            .uint8z, .uint16z, .uint32z, .byte, .sint64, .uint64, .uint64z,
        ].map { (Int($0.rawValue & 0x1F), $0) }
    )

    /// Reads one value of this type from `bytes` (exactly ``size`` of them), or nil for the type's invalid value.
    func value(_ bytes: ArraySlice<UInt8>, bigEndian: Bool) -> FITValue? {
        var raw: UInt64 = 0
        let ordered = bigEndian ? Array(bytes) : bytes.reversed()
        for byte in ordered { raw = raw << 8 | UInt64(byte) }
        guard raw != invalid else { return nil }
        switch self {
        case .sint8: return .signed(Int64(Int8(truncatingIfNeeded: raw)))
        case .sint16: return .signed(Int64(Int16(truncatingIfNeeded: raw)))
        case .sint32: return .signed(Int64(Int32(truncatingIfNeeded: raw)))
        case .sint64: return .signed(Int64(bitPattern: raw))
        case .float32:
            let value = Float(bitPattern: UInt32(truncatingIfNeeded: raw))
            return value.isFinite ? .float(Double(value)) : nil
        case .float64:
            let value = Double(bitPattern: raw)
            return value.isFinite ? .float(value) : nil
        case .string: return nil  // strings are read whole, not value by value
        default: return .unsigned(raw)
        }
    }
}

/// One value of a FIT field, as stored (before the profile's scale and offset).
public enum FITValue: Sendable, Hashable {
    case unsigned(UInt64)
    case signed(Int64)
    case float(Double)

    /// The value as a number.
    public var double: Double {
        switch self {
        case .unsigned(let value): Double(value)
        case .signed(let value): Double(value)
        case .float(let value): value
        }
    }
}
