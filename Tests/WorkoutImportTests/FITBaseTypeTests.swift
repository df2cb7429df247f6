import Testing

@testable import FITFormat

/// Every base type's values as the FIT SDK's profile defines them: invalid values read as none, signed values
/// keep their sign, floats their bits, either byte order.
@Suite struct FITBaseTypeTests {
    static let all: [FITBaseType] = [
        .enumeration, .sint8, .uint8, .sint16, .uint16, .sint32, .uint32, .float32, .float64, .uint8z, .uint16z,
        .uint32z, .byte, .sint64, .uint64, .uint64z,
    ]

    static func bytes(_ value: UInt64, _ size: Int) -> ArraySlice<UInt8> {
        ArraySlice((0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) })
    }

    @Test func theInvalidValueOfEveryTypeReadsAsNone() {
        for type in Self.all {
            #expect(type.value(Self.bytes(type.invalid, type.size), bigEndian: false) == nil, "\(type)")
            #expect(FITBaseType(definitionByte: type.rawValue) == type)
        }
    }

    @Test func valuesKeepTheirSignBitsAndByteOrder() {
        #expect(FITBaseType.sint8.value([0xFE], bigEndian: false) == .signed(-2))
        #expect(FITBaseType.sint16.value(Self.bytes(0x8000, 2), bigEndian: false) == .signed(-32_768))
        #expect(FITBaseType.sint32.value(Self.bytes(0xFFFF_FFFF, 4), bigEndian: false) == .signed(-1))
        #expect(
            FITBaseType.float32.value(Self.bytes(UInt64(Float(1.5).bitPattern), 4), bigEndian: false) == .float(1.5)
        )
        #expect(FITBaseType.float64.value(Self.bytes(Double(-0.25).bitPattern, 8), bigEndian: false) == .float(-0.25))
        #expect(FITBaseType.uint16.value([0x01, 0x02], bigEndian: true) == .unsigned(0x0102))
        #expect(FITBaseType.uint16.value([0x01, 0x02], bigEndian: false) == .unsigned(0x0201))
        #expect(FITBaseType.uint32z.value(Self.bytes(7, 4), bigEndian: false) == .unsigned(7))
        // A NaN is no value either; an unknown type number reads as bytes.
        #expect(FITBaseType.float32.value(Self.bytes(0x7FC0_0000, 4), bigEndian: false) == nil)
        #expect(FITBaseType(definitionByte: 0x1F) == .byte)
    }
}
