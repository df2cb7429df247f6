import DBus

/// An error from bluetoothd (`org.bluez.Error.*`) or from talking to it, as a kind plus BlueZ's message.
///
/// ``Kind`` is a struct, not an enum, so a newer bluetoothd with a new error name still maps to a kind
/// (its name is kept) and callers' `switch`es never break.
public struct BlueZError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, by BlueZ's error name.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The full D-Bus error name, e.g. `org.bluez.Error.NotReady`.
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        static func bluez(_ suffix: String) -> Kind { Kind(rawValue: "org.bluez.Error." + suffix) }

        public static let failed = bluez("Failed")
        public static let inProgress = bluez("InProgress")
        public static let notReady = bluez("NotReady")
        public static let notPermitted = bluez("NotPermitted")
        public static let notAuthorized = bluez("NotAuthorized")
        public static let notConnected = bluez("NotConnected")
        public static let notSupported = bluez("NotSupported")
        public static let invalidArguments = bluez("InvalidArguments")
        public static let alreadyExists = bluez("AlreadyExists")
        public static let alreadyConnected = bluez("AlreadyConnected")
        public static let doesNotExist = bluez("DoesNotExist")
        public static let authenticationFailed = bluez("AuthenticationFailed")
        public static let authenticationCanceled = bluez("AuthenticationCanceled")
        public static let authenticationRejected = bluez("AuthenticationRejected")
        public static let authenticationTimeout = bluez("AuthenticationTimeout")
        public static let connectionAttemptFailed = bluez("ConnectionAttemptFailed")
        /// Nobody owns `org.bluez` on the bus: bluetoothd is not running.
        public static let serviceUnknown = Kind(rawValue: DBusError.Name.serviceUnknown.rawValue)
        /// The bus policy refused the call (the user may not talk to bluetoothd).
        public static let accessDenied = Kind(rawValue: DBusError.Name.accessDenied.rawValue)
        /// bluetoothd did not answer in time.
        public static let timeout = Kind(rawValue: DBusError.Name.noReply.rawValue)
        /// The bus connection is gone.
        public static let disconnected = Kind(rawValue: DBusError.Name.disconnected.rawValue)
        /// The object (adapter, device, characteristic) is not there (any more).
        public static let unknownObject = Kind(rawValue: DBusError.Name.unknownObject.rawValue)

        /// The last part of the name (`NotReady`).
        public var description: String { rawValue.split(separator: ".").last.map(String.init) ?? rawValue }
    }

    public var kind: Kind
    /// BlueZ's own message, e.g. `Operation already in progress`.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Maps a D-Bus error reply; names that say the same thing are folded into one kind.
    public init(_ error: DBusError) {
        let kind: Kind =
            switch error.name {
            case DBusError.Name.timeout.rawValue, DBusError.Name.noReply.rawValue: .timeout
            case DBusError.Name.unknownMethod.rawValue, DBusError.Name.unknownInterface.rawValue: .unknownObject
            case DBusError.Name.noServer.rawValue: .disconnected
            default: Kind(rawValue: error.name)
            }
        self.init(kind, error.message)
    }

    /// The ATT error code inside a `Failed` message ("… ATT error: 0x80"), if there is one.
    public var attErrorCode: UInt8? {
        guard let range = message.range(of: "ATT error: 0x") else { return nil }
        return UInt8(message[range.upperBound...].prefix(2), radix: 16)
    }

    public var description: String { message.isEmpty ? "\(kind)" : "\(kind): \(message)" }
}

extension DBusConnection {
    /// Calls a method of bluetoothd, mapping errors to ``BlueZError``.
    package func callBlueZ(
        _ path: String,
        _ interface: String,
        _ method: String,
        _ arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws(BlueZError) -> [DBusValue] {
        do {
            return try await call(
                destination: BlueZ.service,
                path: path,
                interface: interface,
                method: method,
                arguments: arguments,
                timeout: timeout
            )
        } catch {
            throw BlueZError(error)
        }
    }
}
