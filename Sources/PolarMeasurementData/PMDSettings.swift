/// The settings of a PMD measurement: what a sensor offers (the answer to "get measurement settings") or what a
/// client asks for in a start command, and the factor a start answer carries.
///
/// On the wire each setting is `type (u8), count (u8), count values (little-endian)`, each type with a fixed width.
public struct PMDSettings: Hashable, Sendable {
    /// A setting's type.
    public enum Kind: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        case sampleRate = 0
        case resolution = 1
        case range = 2
        case rangeMilliunit = 3
        case channels = 4
        /// The scale of compressed samples (an IEEE-754 float's bits); only in a start answer.
        case factor = 5
        case security = 6

        /// Bytes per value on the wire.
        public var width: Int {
            switch self {
            case .sampleRate, .resolution, .range: 2
            case .rangeMilliunit, .factor: 4
            case .channels: 1
            case .security: 16
            }
        }

        public var description: String {
            switch self {
            case .sampleRate: "sample rate"
            case .resolution: "resolution"
            case .range: "range"
            case .rangeMilliunit: "range (milli-units)"
            case .channels: "channels"
            case .factor: "factor"
            case .security: "security"
            }
        }
    }

    /// Why settings bytes could not be read.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        public enum Reason: Hashable, Sendable {
            /// A setting type this decoder does not know, so its width is unknown.
            case unknownType(UInt8)
            /// The values announced do not fit in what is left.
            case valuesCut(Kind, count: Int)
            /// A type appears twice.
            case repeated(Kind)
        }

        public var reason: Reason
        /// Offset of the setting's type byte.
        public var offset: Int

        public init(reason: Reason, offset: Int) {
            self.reason = reason
            self.offset = offset
        }

        public var description: String {
            switch reason {
            case .unknownType(let type): "unknown setting type \(type) at offset \(offset)"
            case .valuesCut(let kind, let count):
                "\(kind) at offset \(offset) announces \(count) values of \(kind.width) bytes, more than the answer holds"
            case .repeated(let kind): "\(kind) appears twice (again at offset \(offset))"
            }
        }
    }

    /// The values of each setting present, in wire order. Security values (16 bytes) are not kept.
    public private(set) var values: [Kind: [UInt32]]

    /// Settings from values (a start command usually gives one value per setting).
    public init(_ values: [Kind: [UInt32]] = [:]) { self.values = values }

    /// Reads settings bytes (the parameters of a "get measurement settings" or start answer).
    public init(decoding bytes: [UInt8]) throws(DecodingError) {
        var reader = PMDByteReader(bytes)
        var values: [Kind: [UInt32]] = [:]
        while reader.remaining > 0 {
            let offset = reader.offset
            guard let typeByte = reader.readUInt8(), let kind = Kind(rawValue: typeByte) else {
                throw DecodingError(reason: .unknownType(bytes[offset]), offset: offset)
            }
            guard values[kind] == nil else { throw DecodingError(reason: .repeated(kind), offset: offset) }
            let count = Int(reader.readUInt8() ?? 0)
            guard reader.remaining >= count * kind.width else {
                throw DecodingError(reason: .valuesCut(kind, count: count), offset: offset)
            }
            var list: [UInt32] = []
            for _ in 0..<count {
                if kind == .security {
                    _ = reader.readBytes(kind.width)
                } else if let value = reader.readUnsigned(width: kind.width) {
                    list.append(UInt32(truncatingIfNeeded: value))
                }
            }
            values[kind] = list
        }
        self.values = values
    }

    /// The one value of a setting, when there is exactly one.
    public subscript(kind: Kind) -> UInt32? {
        guard let list = values[kind], list.count == 1 else { return nil }
        return list[0]
    }

    /// The factor of a start answer as a number (1 when absent).
    public var factor: Float {
        self[.factor].map { Float(bitPattern: $0) } ?? 1
    }

    /// The bytes of a start command's settings, in type order; a factor is never sent.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        for kind in Kind.allCases where kind != .factor && kind != .security {
            guard let list = values[kind] else { continue }
            bytes.append(kind.rawValue)
            bytes.append(UInt8(truncatingIfNeeded: list.count))
            for value in list {
                for index in 0..<kind.width { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(index)))) }
            }
        }
        return bytes
    }
}
