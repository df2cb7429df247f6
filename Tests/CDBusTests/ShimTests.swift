import CDBus
import Testing

/// The shim re-exposes libdbus macros Swift cannot import; these pin that the values are the protocol's.
@Suite struct ShimTests {
    @Test func typeCodesAreTheSignatureCharacters() {
        let expected: [(Int32, Character)] = [
            (CDBUS_TYPE_BYTE, "y"), (CDBUS_TYPE_BOOLEAN, "b"), (CDBUS_TYPE_INT16, "n"), (CDBUS_TYPE_UINT16, "q"),
            (CDBUS_TYPE_INT32, "i"), (CDBUS_TYPE_UINT32, "u"), (CDBUS_TYPE_INT64, "x"), (CDBUS_TYPE_UINT64, "t"),
            (CDBUS_TYPE_DOUBLE, "d"), (CDBUS_TYPE_STRING, "s"), (CDBUS_TYPE_OBJECT_PATH, "o"),
            (CDBUS_TYPE_SIGNATURE, "g"), (CDBUS_TYPE_UNIX_FD, "h"), (CDBUS_TYPE_ARRAY, "a"),
            (CDBUS_TYPE_VARIANT, "v"), (CDBUS_TYPE_STRUCT, "r"), (CDBUS_TYPE_DICT_ENTRY, "e"),
            (CDBUS_STRUCT_BEGIN_CHAR, "("), (CDBUS_STRUCT_END_CHAR, ")"),
            (CDBUS_DICT_ENTRY_BEGIN_CHAR, "{"), (CDBUS_DICT_ENTRY_END_CHAR, "}"),
        ]
        for (code, character) in expected {
            #expect(code == Int32(character.asciiValue!), "\(character)")
        }
        #expect(CDBUS_TYPE_INVALID == 0)
        #expect(CDBUS_TIMEOUT_INFINITE == Int32.max)
        #expect(CDBUS_TIMEOUT_USE_DEFAULT == -1)
        #expect(CDBUS_INTERFACE_OBJECT_MANAGER == "org.freedesktop.DBus.ObjectManager")
    }

    @Test func setErrorTakesTheMessageLiterally() {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        cdbus_set_error(&error, "org.bluez.Error.Failed", "100% %s %n done")
        #expect(dbus_error_is_set(&error) != 0)
        #expect(String(cString: error.name) == "org.bluez.Error.Failed")
        #expect(String(cString: error.message) == "100% %s %n done")
    }

    @Test func readsNameOwnerChangedArguments() throws {
        let message = try #require(
            dbus_message_new_signal("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged")
        )
        defer { dbus_message_unref(message) }
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator)
        for text in ["org.bluez", "", ":1.42"] {
            text.withCString { pointer in
                var pointer: UnsafePointer<CChar>? = pointer
                _ = dbus_message_iter_append_basic(&iterator, CDBUS_TYPE_STRING, &pointer)
            }
        }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        var name: UnsafePointer<CChar>?
        var old: UnsafePointer<CChar>?
        var new: UnsafePointer<CChar>?
        #expect(cdbus_message_get_three_strings(message, &error, &name, &old, &new) != 0)
        #expect(String(cString: name!) == "org.bluez")
        #expect(String(cString: old!) == "")
        #expect(String(cString: new!) == ":1.42")

        // A message with other arguments is refused with an error, not misread.
        let wrong = try #require(dbus_message_new_signal("/x", "x.Y", "Z"))
        defer { dbus_message_unref(wrong) }
        #expect(cdbus_message_get_three_strings(wrong, &error, &name, &old, &new) == 0)
        #expect(dbus_error_is_set(&error) != 0)
    }
}
