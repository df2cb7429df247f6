import CDBus
import SafeText

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

    /// The transports libdbus can connect to as a client.
    static let transports: Set<String> = ["unix", "tcp", "nonce-tcp", "unixexec", "autolaunch", "systemd"]

    /// Parses `system`, `session` or a D-Bus address, checking the address with libdbus's own parser and that its
    /// transport is one a client can use, so a mistake is found when the configuration is read rather than when
    /// connecting fails (which a service manager would retry forever).
    public static func parse(_ text: String) throws(DBusError) -> DBusBus {
        let bus = DBusBus(text)
        guard case .address(let address) = bus else { return bus }
        guard !address.isEmpty, !address.utf8.contains(0), address.utf8.count <= 4096 else {
            throw DBusError(.badAddress, "\(address.quotedExcerpt()) is not a D-Bus address")
        }
        var error = DBusError_C()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        var entries: UnsafeMutablePointer<OpaquePointer?>?
        var count: Int32 = 0
        guard dbus_parse_address(address, &entries, &count, &error) != 0 else {
            let reason = error.message.map { String(cString: $0) } ?? "it cannot be parsed"
            throw DBusError(.badAddress, "\(address.quotedExcerpt()) is not a D-Bus address: \(reason)")
        }
        defer { dbus_address_entries_free(entries) }
        for index in 0..<Int(count) {
            guard let entry = entries?[index], let method = dbus_address_entry_get_method(entry) else { continue }
            let transport = String(cString: method)
            func value(_ key: String) -> String? {
                dbus_address_entry_get_value(entry, key).map { String(cString: $0) }
            }
            guard transports.contains(transport) else {
                throw DBusError(
                    .badAddress,
                    "\(address.quotedExcerpt()) is not a D-Bus address: unknown transport \(transport.quotedExcerpt()); "
                        + "use one of \(transports.sorted().joined(separator: ", ")), like unix:path=/run/dbus/system_bus_socket"
                )
            }
            // What libdbus would only find when connecting.
            if transport == "unix", ["path", "abstract", "dir", "tmpdir", "runtime"].allSatisfy({ value($0) == nil }) {
                throw DBusError(
                    .badAddress,
                    "\(address.quotedExcerpt()) is not a D-Bus address: a unix address needs path=, like "
                        + "unix:path=/run/dbus/system_bus_socket"
                )
            }
            if transport == "tcp" || transport == "nonce-tcp", let port = value("port"), UInt16(port) == nil {
                throw DBusError(
                    .badAddress,
                    "\(address.quotedExcerpt()) is not a D-Bus address: port must be a number from 0 to 65535"
                )
            }
        }
        return bus
    }

    public var description: String {
        switch self {
        case .system: "system"
        case .session: "session"
        case .address(let address): address
        }
    }
}
