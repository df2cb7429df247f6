/// What a sensor indicates on the PMD control point: an answer to a command, or a measurement it stopped on its
/// own (the SDK's ONLINE_MEASUREMENT_STOPPED).
public enum PMDControlPointMessage: Hashable, Sendable {
    case response(PMDResponse)
    /// The sensor stopped these measurements by itself (out of its charger? a reset?).
    case measurementStopped([PMDMeasurementType])

    /// Why an indication could not be read.
    public enum DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        case empty
        /// An answer shorter than its five header bytes (`f0, opcode, type, status, more`); four are enough when
        /// the status is an error.
        case responseCut(length: Int)
        case unknownMessage(firstByte: UInt8)
        case tooLong(Int)

        public var description: String {
            switch self {
            case .empty: "an empty control point indication"
            case .responseCut(let length): "a control point answer of \(length) bytes, shorter than its header"
            case .unknownMessage(let byte): "an unknown control point message 0x\(String(byte, radix: 16))"
            case .tooLong(let length): "a control point indication of \(length) bytes, longer than any attribute"
            }
        }
    }

    /// Reads one indication.
    public init(decoding bytes: [UInt8]) throws(DecodingError) {
        guard let first = bytes.first else { throw .empty }
        guard bytes.count <= PMDService.maximumValueLength else { throw .tooLong(bytes.count) }
        switch first {
        case 0xF0:
            var reader = PMDByteReader(bytes)
            _ = reader.readUInt8()
            guard let opcode = reader.readUInt8(), let type = reader.readUInt8(), let status = reader.readUInt8()
            else { throw .responseCut(length: bytes.count) }
            let code = PMDStatus(rawValue: status)
            // The SDK reads "more" and parameters only on success; an error answer may end after its status.
            let more = code == .success ? (reader.readUInt8() ?? 0) != 0 : false
            let parameters = code == .success ? reader.readRest() : []
            self = .response(
                PMDResponse(
                    opcode: PMDOpcode(rawValue: opcode),
                    type: PMDMeasurementType(rawValue: type),
                    status: code,
                    more: more,
                    parameters: parameters
                )
            )
        case 0x01:
            self = .measurementStopped(bytes.dropFirst().map(PMDMeasurementType.init(rawValue:)))
        default:
            throw .unknownMessage(firstByte: first)
        }
    }
}

/// An answer to a control-point command.
public struct PMDResponse: Hashable, Sendable {
    /// The command answered.
    public var opcode: PMDOpcode
    /// The measurement it was about.
    public var type: PMDMeasurementType
    public var status: PMDStatus
    /// Further answer packets follow.
    public var more: Bool
    /// Settings (for get settings and start), the running measurements (get status), or nothing.
    public var parameters: [UInt8]

    public init(opcode: PMDOpcode, type: PMDMeasurementType, status: PMDStatus, more: Bool, parameters: [UInt8]) {
        self.opcode = opcode
        self.type = type
        self.status = status
        self.more = more
        self.parameters = parameters
    }

    /// The bytes of this answer, as a sensor indicates it.
    public func encoded() -> [UInt8] {
        if status != .success { return [0xF0, opcode.rawValue, type.rawValue, status.rawValue] }
        return [0xF0, opcode.rawValue, type.rawValue, status.rawValue, more ? 1 : 0] + parameters
    }
}

/// The status code of a control-point answer, with what it means to a person holding the strap.
public struct PMDStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = PMDStatus(rawValue: 0)
    public static let invalidOpcode = PMDStatus(rawValue: 1)
    public static let invalidMeasurementType = PMDStatus(rawValue: 2)
    public static let notSupported = PMDStatus(rawValue: 3)
    public static let invalidLength = PMDStatus(rawValue: 4)
    public static let invalidParameter = PMDStatus(rawValue: 5)
    public static let alreadyInState = PMDStatus(rawValue: 6)
    public static let invalidResolution = PMDStatus(rawValue: 7)
    public static let invalidSampleRate = PMDStatus(rawValue: 8)
    public static let invalidRange = PMDStatus(rawValue: 9)
    public static let invalidMTU = PMDStatus(rawValue: 10)
    public static let invalidNumberOfChannels = PMDStatus(rawValue: 11)
    public static let invalidState = PMDStatus(rawValue: 12)
    public static let deviceInCharger = PMDStatus(rawValue: 13)
    public static let diskFull = PMDStatus(rawValue: 14)

    public var description: String {
        switch rawValue {
        case 0: "success"
        case 1: "invalid op code"
        case 2: "invalid measurement type"
        case 3: "not supported"
        case 4: "invalid length"
        case 5: "invalid parameter"
        case 6: "already in that state"
        case 7: "invalid resolution"
        case 8: "invalid sample rate"
        case 9: "invalid range"
        case 10: "invalid MTU"
        case 11: "invalid number of channels"
        case 12: "invalid state"
        case 13: "the strap is in its charger"
        case 14: "disk full"
        default: "status \(rawValue)"
        }
    }
}
