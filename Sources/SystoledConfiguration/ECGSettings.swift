import BlueZ
import HeartRateSensors
import SafeText

extension DaemonConfiguration {
    /// What sensors with Polar's Measurement Data service (a Polar H10) stream during a workout (`[ecg]`): the ECG
    /// (`enabled`, off by default), the accelerometer (`acceleration_hz`, 0 = off; `acceleration_range_g`), and per
    /// sensor with its address as the key (`"A0:9E:1A:94:8D:23" = true`).
    public struct ECG: Sendable, Equatable {
        /// Whether every sensor not named below streams its ECG.
        public var enabled = false
        /// The accelerometer's rate: 0 (off), 25, 50, 100 or 200 Hz.
        public var accelerationRate: UInt32 = 0
        /// The accelerometer's range: 2, 4 or 8 g.
        public var accelerationRange: UInt32 = 8
        /// Sensors named on their own: whether each streams its ECG (and acceleration, at the rate above).
        public var enabledBySensor: [BluetoothAddress: Bool] = [:]

        public init() {}

        static let keys = ["enabled", "acceleration_hz", "acceleration_range_g"]
        static let rates: [UInt32] = [25, 50, 100, 200]
        static let ranges: [UInt32] = [2, 4, 8]

        /// What a sensor streams when `on`.
        func options(_ on: Bool) -> PMDOptions? {
            guard on else { return nil }
            return PMDOptions(
                ecg: true,
                accelerometer: accelerationRate > 0
                    ? PMDOptions.Accelerometer(rate: accelerationRate, range: accelerationRange) : nil
            )
        }

        /// The options for sensors not named, or nil when they stream nothing.
        public var defaultOptions: PMDOptions? { options(enabled) }

        /// The options of named sensors (a sensor turned off has PMDOptions that ask for nothing).
        public var optionsBySensor: [BluetoothAddress: PMDOptions] {
            enabledBySensor.mapValues { options($0) ?? PMDOptions(ecg: false, accelerometer: nil) }
        }

        /// Whether any sensor streams anything.
        public var isUsed: Bool { enabled || enabledBySensor.values.contains(true) }
    }

    /// An `[ecg]` entry.
    mutating func applyECG(_ entry: TOML.Entry) throws(Reason) {
        switch entry.key {
        case "enabled":
            guard case .boolean(let on) = entry.value else {
                throw Reason("enabled in [ecg] must be true or false, not \(entry.value.kind)")
            }
            ecg.enabled = on
        case "acceleration_hz":
            guard case .integer(let rate) = entry.value, rate == 0 || ECG.rates.contains(UInt32(clamping: rate)) else {
                throw Reason("acceleration_hz in [ecg] must be 0 (off), 25, 50, 100 or 200 (an H10's rates)")
            }
            ecg.accelerationRate = UInt32(rate)
        case "acceleration_range_g":
            guard case .integer(let range) = entry.value, ECG.ranges.contains(UInt32(clamping: range)) else {
                throw Reason("acceleration_range_g in [ecg] must be 2, 4 or 8 (an H10's ranges)")
            }
            ecg.accelerationRange = UInt32(range)
        default:
            guard let address = try? BluetoothAddress(entry.key) else {
                throw Reason(
                    "unknown setting \(entry.key.quotedExcerpt()) in [ecg]; known: \(ECG.keys.joined(separator: ", ")), "
                        + "and a sensor's address in quotes to set its own (\"A0:9E:1A:12:34:56\" = true)"
                )
            }
            guard case .boolean(let on) = entry.value else {
                throw Reason("\(address) in [ecg] must be true or false, not \(entry.value.kind)")
            }
            guard ecg.enabledBySensor[address] == nil else {
                throw Reason("\(address) is set twice in [ecg]; set each sensor once")
            }
            guard ecg.enabledBySensor.count < DaemonConfiguration.maximumSensors else {
                throw Reason("[ecg] sets more than \(DaemonConfiguration.maximumSensors) sensors")
            }
            ecg.enabledBySensor[address] = on
        }
    }
}
