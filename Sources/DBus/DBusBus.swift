/// Which bus to connect to.
public enum DBusBus: Sendable, Hashable, CustomStringConvertible {
    /// The system bus, where bluetoothd owns `org.bluez`.
    case system
    /// The login session's bus.
    case session
    /// A bus at an explicit address, e.g. `unix:path=/tmp/test-bus` (how tests reach their private bus).
    case address(String)

    /// Parses `system`, `session`, or anything else as an address.
    public init(_ text: String) {
        switch text {
        case "system": self = .system
        case "session": self = .session
        default: self = .address(text)
        }
    }

    public var description: String {
        switch self {
        case .system: "system"
        case .session: "session"
        case .address(let address): address
        }
    }
}
