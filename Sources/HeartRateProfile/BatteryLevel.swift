/// Battery level in percent (characteristic 0x2A19 of the Battery service 0x180F; read, often notify).
public struct BatteryLevel: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// 0–100.
    public let percent: UInt8

    /// Why a Battery Level value is not usable.
    public enum DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The read returned no bytes.
        case emptyValue
        /// The value is above 100 %.
        case outOfRange(UInt8)

        public var description: String {
            switch self {
            case .emptyValue: "empty Battery Level value: expected 1 byte at offset 0"
            case .outOfRange(let value): "invalid Battery Level \(value) at offset 0: must be 0–100 %"
            }
        }
    }

    /// Creates a level; nil when `percent` is above 100.
    public init?(percent: UInt8) {
        guard percent <= 100 else { return nil }
        self.percent = percent
    }

    /// Decodes the value read from (or notified by) 0x2A19.
    public init<Bytes: Collection>(decoding bytes: Bytes) throws(DecodingError) where Bytes.Element == UInt8 {
        guard let value = bytes.first else { throw .emptyValue }
        guard let level = BatteryLevel(percent: value) else { throw .outOfRange(value) }
        self = level
    }

    /// The value as a payload for 0x2A19.
    public func encoded() -> [UInt8] { [percent] }

    public var description: String { "\(percent) %" }

    public static func < (lhs: BatteryLevel, rhs: BatteryLevel) -> Bool { lhs.percent < rhs.percent }
}
