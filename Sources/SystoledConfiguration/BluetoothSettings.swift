import BlueZ
import SafeText

extension DaemonConfiguration {
    /// How the sensors' notifications travel (`[bluetooth]`): `notify = "acquire"` (AcquireNotify, a socket per
    /// sensor past the bus; the default) or `"signal"` (StartNotify, through the message bus), and per sensor with
    /// its address as the key (`"A0:9E:1A:94:8D:23" = "signal"`).
    public struct Bluetooth: Sendable, Equatable {
        /// The method for every sensor not named below. AcquireNotify by default: on StartNotify bluetoothd announces
        /// every heart rate in a signal any local user may receive, and health data stays with group systole.
        public var notify = NotifyMethod.acquire
        /// The method of particular sensors, by address.
        public var notifyBySensor: [BluetoothAddress: NotifyMethod] = [:]

        public init() {}

        static let keys = ["notify"]
    }

    /// A `[bluetooth]` entry.
    mutating func applyBluetooth(_ entry: TOML.Entry) throws(Reason) {
        let method = { (what: String) throws(Reason) -> NotifyMethod in
            guard case .string(let text) = entry.value, let method = NotifyMethod(rawValue: text) else {
                let given = if case .string(let text) = entry.value { text.quotedExcerpt() } else { entry.value.kind }
                throw Reason(
                    "\(what) must be \"signal\" (StartNotify, through the message bus) or \"acquire\" "
                        + "(AcquireNotify, a socket past the bus), not \(given)"
                )
            }
            return method
        }
        if entry.key == "notify" {
            bluetooth.notify = try method("notify in [bluetooth]")
            return
        }
        guard let address = try? BluetoothAddress(entry.key) else {
            throw Reason(
                "unknown setting \(entry.key.quotedExcerpt()) in [bluetooth]; known: notify, and a sensor's address "
                    + "in quotes to set its own (\"A0:9E:1A:12:34:56\" = \"signal\")"
            )
        }
        guard bluetooth.notifyBySensor[address] == nil else {
            throw Reason("\(address) is set twice in [bluetooth]; set each sensor once")
        }
        guard bluetooth.notifyBySensor.count < DaemonConfiguration.maximumSensors else {
            throw Reason("[bluetooth] sets more than \(DaemonConfiguration.maximumSensors) sensors")
        }
        bluetooth.notifyBySensor[address] = try method("the notify method of \(address)")
    }
}
