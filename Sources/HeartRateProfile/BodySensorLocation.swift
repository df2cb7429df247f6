/// Where the sensor is worn (characteristic 0x2A38, read; fixed for a connection).
///
/// Values 7–255 are reserved by the spec; they are kept as ``reserved(_:)`` rather than rejected, so a newer
/// sensor does not fail to connect.
public enum BodySensorLocation: Hashable, Sendable, CustomStringConvertible {
    case other
    case chest
    case wrist
    case finger
    case hand
    case earLobe
    case foot
    /// A value the spec reserves for future use.
    case reserved(UInt8)

    /// Why a Body Sensor Location value could not be read.
    public enum DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The read returned no bytes.
        case emptyValue

        public var description: String { "empty Body Sensor Location value: expected 1 byte at offset 0" }
    }

    /// Maps a raw value; never fails, reserved values included.
    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .other
        case 1: self = .chest
        case 2: self = .wrist
        case 3: self = .finger
        case 4: self = .hand
        case 5: self = .earLobe
        case 6: self = .foot
        default: self = .reserved(rawValue)
        }
    }

    /// Decodes the value read from 0x2A38. Only the first byte is meaningful.
    public init<Bytes: Collection>(decoding bytes: Bytes) throws(DecodingError) where Bytes.Element == UInt8 {
        guard let first = bytes.first else { throw .emptyValue }
        self.init(rawValue: first)
    }

    /// The byte as sent on the wire.
    public var rawValue: UInt8 {
        switch self {
        case .other: 0
        case .chest: 1
        case .wrist: 2
        case .finger: 3
        case .hand: 4
        case .earLobe: 5
        case .foot: 6
        case .reserved(let value): value
        }
    }

    /// The value as a payload for 0x2A38.
    public func encoded() -> [UInt8] { [rawValue] }

    /// Lower-case English name ("chest", "ear lobe", "reserved (9)").
    public var description: String {
        switch self {
        case .other: "other"
        case .chest: "chest"
        case .wrist: "wrist"
        case .finger: "finger"
        case .hand: "hand"
        case .earLobe: "ear lobe"
        case .foot: "foot"
        case .reserved(let value): "reserved (\(value))"
        }
    }
}
