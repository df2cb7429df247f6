import CDBus
import SafeText

/// Checks names and strings before they reach libdbus, which treats invalid ones as programming errors (it logs
/// and may abort). Everything that comes from a peer or a user is checked here and becomes a `DBusError`.
enum Validate {
    static func objectPath(_ path: String) throws(DBusError) {
        try check(path, "object path", dbus_validate_path)
    }

    static func interface(_ name: String) throws(DBusError) {
        try check(name, "interface name", dbus_validate_interface)
    }

    static func member(_ name: String) throws(DBusError) {
        try check(name, "member name", dbus_validate_member)
    }

    static func errorName(_ name: String) throws(DBusError) {
        try check(name, "error name", dbus_validate_error_name)
    }

    static func busName(_ name: String) throws(DBusError) {
        try check(name, "bus name", dbus_validate_bus_name)
    }

    static func signature(_ text: String) throws(DBusError) {
        var error = DBusError_C()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard dbus_signature_validate(text, &error) != 0 else {
            throw DBusError(.invalidSignature, "\(text.quotedExcerpt()) is not a valid signature")
        }
    }

    /// D-Bus strings are UTF-8 without NUL; Swift strings are always valid UTF-8, so only NUL is checked.
    static func string(_ text: String) throws(DBusError) {
        guard !text.utf8.contains(0) else {
            throw DBusError(.invalidArgs, "a D-Bus string cannot contain a NUL character")
        }
    }

    private static func check(
        _ text: String,
        _ what: String,
        _ validator: (UnsafePointer<CChar>?, UnsafeMutablePointer<DBusError_C>?) -> dbus_bool_t
    ) throws(DBusError) {
        var error = DBusError_C()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard !text.utf8.contains(0), validator(text, &error) != 0 else {
            throw DBusError(.invalidArgs, "\(text.quotedExcerpt()) is not a valid D-Bus \(what)")
        }
    }
}

/// libdbus's own error struct, renamed because the Swift `DBusError` is the public error type.
typealias DBusError_C = CDBus.DBusError
