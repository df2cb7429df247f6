import BlueZ
import DBus

extension DaemonConfiguration {
    /// Who wears which sensor (`[athletes]`, `"A0:9E:1A:94:8D:23" = "Ana"`): workouts, the live log, the status and
    /// exports carry the athlete, and a team session starts one workout per athlete.
    public struct Athletes: Sendable, Equatable {
        /// A sensor's address (as `BluetoothAddress` prints it) to its athlete's name. One athlete may wear
        /// several sensors.
        public private(set) var byAddress: [String: String] = [:]

        /// The longest name accepted, in characters.
        public static let maximumNameLength = 64

        public init(_ byAddress: [String: String] = [:]) {
            self.byAddress = byAddress
        }

        /// The athlete wearing the sensor at `address`, if one is named.
        public func athlete(wearing address: String?) -> String? {
            address.flatMap { byAddress[$0] }
        }

        /// Every athlete's name, each once, sorted.
        public var names: [String] { Array(Set(byAddress.values)).sorted() }

        /// Whether no athlete is named.
        public var isEmpty: Bool { byAddress.isEmpty }

        mutating func add(address: BluetoothAddress, name: String) {
            byAddress[address.description] = name
        }

        /// Checks an athlete's name: 1 to 64 characters of letters, digits, spaces and `. - _ '`, not starting or
        /// ending with a space. Names go into log lines, file names, JSON and web pages, so nothing else is taken.
        public static func checkedName(_ text: String) -> String? {
            guard !text.isEmpty, text.count <= maximumNameLength, text.first != " ", text.last != " " else {
                return nil
            }
            let allowed = text.unicodeScalars.allSatisfy { scalar in
                scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                    || " .-_'".unicodeScalars.contains(scalar)
            }
            return allowed ? text : nil
        }
    }

    /// An `[athletes]` entry: a sensor's address in quotes, then the athlete's name.
    mutating func applyAthlete(_ entry: TOML.Entry) throws(Reason) {
        let address: BluetoothAddress
        do {
            address = try BluetoothAddress(entry.key)
        } catch {
            throw Reason(
                "\(entry.key.quotedExcerpt()) in [athletes] is not a sensor address; write "
                    + "\"A0:9E:1A:12:34:56\" = \"Ana\" (find addresses with 'systole scan')"
            )
        }
        guard case .string(let text) = entry.value else {
            throw Reason("the athlete for \(address) must be a name in quotes, not \(entry.value.kind)")
        }
        guard let name = Athletes.checkedName(text) else {
            throw Reason(
                "the athlete for \(address) must be 1 to \(Athletes.maximumNameLength) letters, digits, spaces or "
                    + ". - _ ' (no space first or last), not \(text.quotedExcerpt())"
            )
        }
        guard athletes.byAddress[address.description] == nil else {
            throw Reason("\(address) is named twice in [athletes]; give each sensor one athlete")
        }
        guard athletes.byAddress.count < DaemonConfiguration.maximumSensors else {
            throw Reason("[athletes] names more than \(DaemonConfiguration.maximumSensors) sensors")
        }
        athletes.add(address: address, name: name)
    }
}
