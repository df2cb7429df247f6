import BlueZ
import DBus

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

    package mutating func add(address: BluetoothAddress, name: String) {
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
