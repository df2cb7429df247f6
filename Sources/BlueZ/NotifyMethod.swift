/// How a characteristic's notifications travel from bluetoothd to us.
public enum NotifyMethod: String, Sendable, CaseIterable, CustomStringConvertible {
    /// `StartNotify`: each notification is a `PropertiesChanged` signal that dbus-daemon parses, matches and copies
    /// to every listener. Shared: any number of clients may listen.
    case signal
    /// `AcquireNotify`: each notification is one datagram on a socket bluetoothd hands over, past the message bus.
    /// Exclusive: while one client holds it, bluetoothd refuses every other client's StartNotify and AcquireNotify.
    case acquire

    public var description: String { rawValue }
}

/// Why an acquired notification socket ended on its own.
public struct AcquiredNotificationsEnded: Error, Sendable, CustomStringConvertible {
    /// What the socket reported.
    public var end: String

    public var description: String { "the notification socket \(end)" }
}
