/// An error from D-Bus: a reply of type ERROR from a peer (with its error name and message), or a failure of the
/// binding itself (with a name from `org.freedesktop.DBus.Error.*`).
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The D-Bus error name, e.g. `org.bluez.Error.NotReady`.
    public var name: String
    /// The human-readable message that came with it (may be empty).
    public var message: String

    /// Creates an error with any name.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// Creates an error with one of the standard names.
    public init(_ name: Name, _ message: String) {
        self.init(name: name.rawValue, message: message)
    }

    /// `org.freedesktop.DBus.Error.*` names the binding itself produces.
    public enum Name: String, Sendable {
        case failed = "org.freedesktop.DBus.Error.Failed"
        case noReply = "org.freedesktop.DBus.Error.NoReply"
        case timeout = "org.freedesktop.DBus.Error.Timeout"
        case disconnected = "org.freedesktop.DBus.Error.Disconnected"
        case noServer = "org.freedesktop.DBus.Error.NoServer"
        case badAddress = "org.freedesktop.DBus.Error.BadAddress"
        case invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        case invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
        case unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        case unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
        case unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
        case unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
        case propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
        case accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
        case serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
        case nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
        case noMemory = "org.freedesktop.DBus.Error.NoMemory"
    }

    /// Whether this error has the given standard name.
    public func `is`(_ name: Name) -> Bool { self.name == name.rawValue }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }
}
