/// What a Polar sensor measures over its Measurement Data service (PMD): the type byte of control-point commands,
/// responses and data frames. Unknown values are kept (a newer sensor may offer more) and named by number.
public struct PMDMeasurementType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Single-lead ECG in µV (an H10 streams it at about 130 Hz).
    public static let ecg = PMDMeasurementType(rawValue: 0)
    /// Photoplethysmogram (Verity Sense, OH1).
    public static let ppg = PMDMeasurementType(rawValue: 1)
    /// Accelerometer, three axes in milli-g.
    public static let acceleration = PMDMeasurementType(rawValue: 2)
    /// Peak-to-peak intervals (Verity Sense, OH1).
    public static let ppi = PMDMeasurementType(rawValue: 3)
    /// Gyroscope.
    public static let gyroscope = PMDMeasurementType(rawValue: 5)
    /// Magnetometer.
    public static let magnetometer = PMDMeasurementType(rawValue: 6)
    /// The SDK mode switch.
    public static let sdkMode = PMDMeasurementType(rawValue: 9)

    public var description: String {
        switch rawValue {
        case 0: "ECG"
        case 1: "PPG"
        case 2: "ACC"
        case 3: "PPI"
        case 5: "gyroscope"
        case 6: "magnetometer"
        case 9: "SDK mode"
        default: "measurement type \(rawValue)"
        }
    }
}

/// The GATT attributes of the PMD service, as BlueZ spells their UUIDs.
public enum PMDService {
    /// The PMD service.
    public static let serviceUUID = "fb005c80-02e7-f387-1cad-8acd2d8df0c8"
    /// The control point: read (what the sensor can measure), write (commands), indicate (answers).
    public static let controlPointUUID = "fb005c81-02e7-f387-1cad-8acd2d8df0c8"
    /// The data characteristic: notify (frames).
    public static let dataUUID = "fb005c82-02e7-f387-1cad-8acd2d8df0c8"
    /// The ATT MTU an H10 needs to send full frames (73 ECG samples); with less it refuses to start.
    public static let preferredMTU = 232
    /// The longest value an attribute can have (Core spec, ATT): a longer frame is not from a sensor.
    public static let maximumValueLength = 512
}
