import CDBus
import Glibc

/// Reads the one signal a sensor sends hundreds of times a second, `PropertiesChanged` carrying a single byte-array
/// property (BlueZ's `Value: ay` of a characteristic), straight from libdbus's buffer: no `DBusValue` tree, no
/// strings built, no copy of the bytes.
///
/// Anything else, including the same signal changing a second property as well or invalidating one, is not read
/// here; the caller sends it down the general path, which handles every signal.
enum ByteValueChange {
    private static let signature = "sa{sv}as"

    /// Calls `body` with the value's bytes and returns true when `raw` is a `PropertiesChanged` of `interface`
    /// whose only change is `property` as `ay`; returns false, without calling `body`, otherwise. The bytes are
    /// valid during the call only.
    static func read(
        _ raw: OpaquePointer,
        interface: ContiguousArray<CChar>,
        property: ContiguousArray<CChar>,
        _ body: (UnsafeRawBufferPointer) -> Void
    ) -> Bool {
        guard let actual = dbus_message_get_signature(raw), strcmp(actual, signature) == 0 else { return false }
        var arguments = DBusMessageIter()
        guard dbus_message_iter_init(raw, &arguments) != 0,
            text(&arguments, equals: interface),
            dbus_message_iter_next(&arguments) != 0
        else { return false }
        var changes = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &changes)
        guard dbus_message_iter_get_arg_type(&changes) == CDBUS_TYPE_DICT_ENTRY else { return false }
        var entry = DBusMessageIter()
        dbus_message_iter_recurse(&changes, &entry)
        guard text(&entry, equals: property), dbus_message_iter_next(&entry) != 0,
            dbus_message_iter_get_arg_type(&entry) == CDBUS_TYPE_VARIANT
        else { return false }
        var variant = DBusMessageIter()
        dbus_message_iter_recurse(&entry, &variant)
        guard dbus_message_iter_get_arg_type(&variant) == CDBUS_TYPE_ARRAY,
            dbus_message_iter_get_element_type(&variant) == CDBUS_TYPE_BYTE
        else { return false }
        // Exactly one change and nothing invalidated: a signal that says more goes the general way.
        guard dbus_message_iter_next(&changes) == 0, dbus_message_iter_next(&arguments) != 0 else { return false }
        var invalidated = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &invalidated)
        guard dbus_message_iter_get_arg_type(&invalidated) == CDBUS_TYPE_INVALID else { return false }
        var bytes = DBusMessageIter()
        dbus_message_iter_recurse(&variant, &bytes)
        var pointer: UnsafeMutableRawPointer?
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&bytes, &pointer, &count)
        body(UnsafeRawBufferPointer(start: count > 0 ? pointer : nil, count: Int(max(count, 0))))
        return true
    }

    /// Whether the iterator points at a string equal to `expected` (NUL-terminated).
    private static func text(_ iterator: inout DBusMessageIter, equals expected: ContiguousArray<CChar>) -> Bool {
        guard dbus_message_iter_get_arg_type(&iterator) == CDBUS_TYPE_STRING else { return false }
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &pointer)
        guard let pointer else { return false }
        return expected.withUnsafeBufferPointer { strcmp(pointer, $0.baseAddress!) == 0 }
    }
}
