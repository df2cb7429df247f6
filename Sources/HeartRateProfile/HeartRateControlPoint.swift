/// A command written to the Heart Rate Control Point (characteristic 0x2A39, write).
///
/// The spec defines a single opcode. A sensor answers any other value with ATT application error
/// ``valueNotSupportedATTError``.
public enum HeartRateControlPoint: UInt8, Hashable, Sendable, CaseIterable {
    /// Reset the energy-expended counter to 0 (opcode 0x01). Clients write it when the counter saturates at
    /// 0xFFFF kJ.
    case resetEnergyExpended = 0x01

    /// ATT application error 0x80, "Control Point value not supported": a sensor's answer to an unknown opcode.
    public static let valueNotSupportedATTError: UInt8 = 0x80

    /// Why a written control-point value was refused.
    public enum DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        /// Nothing was written.
        case emptyValue
        /// The opcode is not one the spec defines; the sensor answers ATT error 0x80.
        case valueNotSupported(UInt8)

        /// The ATT error a sensor returns for this write.
        public var attErrorCode: UInt8 { HeartRateControlPoint.valueNotSupportedATTError }

        public var description: String {
            switch self {
            case .emptyValue:
                "empty Heart Rate Control Point write: expected the opcode byte at offset 0 (ATT error 0x80)"
            case .valueNotSupported(let value):
                "Heart Rate Control Point value 0x\(Hex.encode([value])) not supported: the only opcode is 0x01 (reset energy expended); ATT error 0x80"
            }
        }
    }

    /// Decodes a value written to 0x2A39, as a sensor (or the simulator) does.
    public init<Bytes: Collection>(decoding bytes: Bytes) throws(DecodingError) where Bytes.Element == UInt8 {
        guard let opcode = bytes.first else { throw .emptyValue }
        guard let command = HeartRateControlPoint(rawValue: opcode), bytes.count == 1 else {
            throw .valueNotSupported(opcode)
        }
        self = command
    }

    /// The value to write.
    public func encoded() -> [UInt8] { [rawValue] }
}
