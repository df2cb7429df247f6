/// A command written to the PMD control point: `opcode, measurement type, settings…`.
public enum PMDCommand: Hashable, Sendable {
    /// Asks what settings a measurement offers (opcode 1).
    case getSettings(PMDMeasurementType)
    /// Starts a measurement with the given settings (opcode 2).
    case start(PMDMeasurementType, PMDSettings)
    /// Stops a measurement (opcode 3).
    case stop(PMDMeasurementType)
    /// Asks which measurements are running (opcode 5).
    case getStatus

    /// The opcode on the wire.
    public var opcode: PMDOpcode {
        switch self {
        case .getSettings: .getSettings
        case .start: .start
        case .stop: .stop
        case .getStatus: .getStatus
        }
    }

    /// The bytes to write.
    public func encoded() -> [UInt8] {
        switch self {
        case .getSettings(let type): [PMDOpcode.getSettings.rawValue, type.rawValue]
        case .start(let type, let settings): [PMDOpcode.start.rawValue, type.rawValue] + settings.encoded()
        case .stop(let type): [PMDOpcode.stop.rawValue, type.rawValue]
        case .getStatus: [PMDOpcode.getStatus.rawValue]
        }
    }

    /// ECG at 130 Hz, 14 bits: what an H10 accepts (and the only ECG setting it has).
    public static let startH10ECG = PMDCommand.start(.ecg, PMDSettings([.sampleRate: [130], .resolution: [14]]))

    /// Accelerometer at `rate` Hz (25, 50, 100 or 200 on an H10), 16 bits, ±`range` G (2, 4 or 8).
    public static func startAcceleration(rate: UInt32, range: UInt32) -> PMDCommand {
        .start(.acceleration, PMDSettings([.sampleRate: [rate], .resolution: [16], .range: [range]]))
    }
}

/// The opcodes of the PMD control point (Polar's SDK, `PmdControlPointCommandClientToService`).
public struct PMDOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let getSettings = PMDOpcode(rawValue: 1)
    public static let start = PMDOpcode(rawValue: 2)
    public static let stop = PMDOpcode(rawValue: 3)
    public static let getSDKModeSettings = PMDOpcode(rawValue: 4)
    public static let getStatus = PMDOpcode(rawValue: 5)

    public var description: String {
        switch rawValue {
        case 1: "get settings"
        case 2: "start"
        case 3: "stop"
        case 4: "get SDK-mode settings"
        case 5: "get status"
        default: "opcode \(rawValue)"
        }
    }
}

/// What reading the PMD control point tells: the measurements the sensor can stream (`0x0F`, then a bitmask).
public struct PMDFeatures: Hashable, Sendable {
    /// The bitmask, bit n set when measurement type n is offered.
    public let mask: UInt64
    /// The first byte of the control point's value when read.
    public static let readOpcode: UInt8 = 0x0F

    /// Why a control-point read could not be understood.
    public enum DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        case empty
        case notAFeatureRead(firstByte: UInt8)
        case tooLong(Int)

        public var description: String {
            switch self {
            case .empty: "the control point read back empty"
            case .notAFeatureRead(let byte):
                "the control point read starts with 0x\(String(byte, radix: 16)), not 0x0f (features)"
            case .tooLong(let count): "the control point read holds \(count) bytes, at most 9 are features"
            }
        }
    }

    /// Builds features from the types offered.
    public init(_ types: [PMDMeasurementType]) {
        mask = types.reduce(0) { $0 | (UInt64(1) << UInt64($1.rawValue & 63)) }
    }

    /// Reads the value of the control point.
    public init(decoding bytes: [UInt8]) throws(DecodingError) {
        guard let first = bytes.first else { throw .empty }
        guard first == Self.readOpcode else { throw .notAFeatureRead(firstByte: first) }
        guard bytes.count <= 9 else { throw .tooLong(bytes.count) }
        var reader = PMDByteReader(Array(bytes.dropFirst()))
        mask = reader.readUnsigned(width: reader.remaining) ?? 0
    }

    /// Whether the sensor offers a measurement.
    public func offers(_ type: PMDMeasurementType) -> Bool {
        type.rawValue < 64 && mask & (UInt64(1) << UInt64(type.rawValue)) != 0
    }

    /// The control point's value for these features (what a sensor answers to a read).
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = [0x0F]
        var rest = mask
        repeat {
            bytes.append(UInt8(truncatingIfNeeded: rest))
            rest >>= 8
        } while rest != 0 || bytes.count < 3
        return bytes
    }
}
