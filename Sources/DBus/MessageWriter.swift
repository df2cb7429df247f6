import CDBus

/// Appends `DBusValue`s to a message with libdbus's non-variadic iterator API.
enum MessageWriter {
    static func append(_ value: DBusValue, to iterator: inout DBusMessageIter) throws(DBusError) {
        switch value {
        case .byte(var v): try basic(&iterator, CDBUS_TYPE_BYTE, &v)
        case .boolean(let b):
            var v: dbus_bool_t = b ? 1 : 0
            try basic(&iterator, CDBUS_TYPE_BOOLEAN, &v)
        case .int16(var v): try basic(&iterator, CDBUS_TYPE_INT16, &v)
        case .uint16(var v): try basic(&iterator, CDBUS_TYPE_UINT16, &v)
        case .int32(var v): try basic(&iterator, CDBUS_TYPE_INT32, &v)
        case .uint32(var v): try basic(&iterator, CDBUS_TYPE_UINT32, &v)
        case .int64(var v): try basic(&iterator, CDBUS_TYPE_INT64, &v)
        case .uint64(var v): try basic(&iterator, CDBUS_TYPE_UINT64, &v)
        case .double(var v): try basic(&iterator, CDBUS_TYPE_DOUBLE, &v)
        case .unixFD(var v): try basic(&iterator, CDBUS_TYPE_UNIX_FD, &v)
        case .string(let text):
            try Validate.string(text)
            try cString(&iterator, CDBUS_TYPE_STRING, text)
        case .objectPath(let path):
            try Validate.objectPath(path)
            try cString(&iterator, CDBUS_TYPE_OBJECT_PATH, path)
        case .signature(let text):
            try Validate.signature(text)
            try cString(&iterator, CDBUS_TYPE_SIGNATURE, text)
        case .variant(let inner):
            try container(&iterator, CDBUS_TYPE_VARIANT, inner.type.signature) { sub throws(DBusError) in
                try append(inner, to: &sub)
            }
        case .array(let elementType, let elements):
            if case .array(.byte) = value.type, elements.count > 16 {
                try byteArray(&iterator, elements)
                return
            }
            try container(&iterator, CDBUS_TYPE_ARRAY, elementType.signature) { sub throws(DBusError) in
                for element in elements {
                    guard element.type == elementType else {
                        throw DBusError(
                            .invalidArgs,
                            "array of '\(elementType.signature)' holds a '\(element.type.signature)' value"
                        )
                    }
                    try append(element, to: &sub)
                }
            }
        case .dictEntry(let key, let entryValue):
            guard key.type.isBasic else {
                throw DBusError(.invalidArgs, "a dict key must be a basic type, not '\(key.type.signature)'")
            }
            try container(&iterator, CDBUS_TYPE_DICT_ENTRY, nil) { sub throws(DBusError) in
                try append(key, to: &sub)
                try append(entryValue, to: &sub)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError(.invalidArgs, "a D-Bus struct needs at least one field") }
            try container(&iterator, CDBUS_TYPE_STRUCT, nil) { sub throws(DBusError) in
                for field in fields { try append(field, to: &sub) }
            }
        }
    }

    private static func basic<T: BitwiseCopyable>(
        _ iterator: inout DBusMessageIter,
        _ type: Int32,
        _ value: inout T
    ) throws(DBusError) {
        guard dbus_message_iter_append_basic(&iterator, type, &value) != 0 else {
            throw DBusError(.noMemory, "out of memory appending a value")
        }
    }

    private static func cString(_ iterator: inout DBusMessageIter, _ type: Int32, _ text: String) throws(DBusError) {
        let ok = text.withCString { pointer in
            var pointer: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iterator, type, &pointer)
        }
        guard ok != 0 else { throw DBusError(.noMemory, "out of memory appending a string") }
    }

    /// `ay` in one copy: notifications carry byte arrays, and appending them byte by byte costs a call each.
    private static func byteArray(_ iterator: inout DBusMessageIter, _ elements: [DBusValue]) throws(DBusError) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(elements.count)
        for element in elements {
            guard case .byte(let byte) = element else {
                throw DBusError(.invalidArgs, "array of 'y' holds a '\(element.type.signature)' value")
            }
            bytes.append(byte)
        }
        try container(&iterator, CDBUS_TYPE_ARRAY, "y") { sub throws(DBusError) in
            let ok = bytes.withUnsafeBufferPointer { buffer in
                var base = buffer.baseAddress
                return dbus_message_iter_append_fixed_array(&sub, CDBUS_TYPE_BYTE, &base, Int32(buffer.count))
            }
            guard ok != 0 else { throw DBusError(.noMemory, "out of memory appending bytes") }
        }
    }

    private static func container(
        _ iterator: inout DBusMessageIter,
        _ type: Int32,
        _ signature: String?,
        _ body: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) {
        var sub = DBusMessageIter()
        guard dbus_message_iter_open_container(&iterator, type, signature, &sub) != 0 else {
            throw DBusError(.noMemory, "out of memory opening a container")
        }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iterator, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iterator, &sub) != 0 else {
            throw DBusError(.noMemory, "out of memory closing a container")
        }
    }
}
