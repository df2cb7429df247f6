import CDBus
import Glibc

/// Reads `DBusValue`s from a message iterator.
enum MessageReader {
    /// Reads every remaining value at this level.
    static func readAll(_ iterator: inout DBusMessageIter) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iterator) != CDBUS_TYPE_INVALID {
            values.append(try read(&iterator))
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    /// Reads the value the iterator points at, without advancing.
    static func read(_ iterator: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iterator)
        switch type {
        case CDBUS_TYPE_BYTE: return .byte(basic(&iterator, UInt8.self))
        case CDBUS_TYPE_BOOLEAN: return .boolean(basic(&iterator, dbus_bool_t.self) != 0)
        case CDBUS_TYPE_INT16: return .int16(basic(&iterator, Int16.self))
        case CDBUS_TYPE_UINT16: return .uint16(basic(&iterator, UInt16.self))
        case CDBUS_TYPE_INT32: return .int32(basic(&iterator, Int32.self))
        case CDBUS_TYPE_UINT32: return .uint32(basic(&iterator, UInt32.self))
        case CDBUS_TYPE_INT64: return .int64(basic(&iterator, Int64.self))
        case CDBUS_TYPE_UINT64: return .uint64(basic(&iterator, UInt64.self))
        case CDBUS_TYPE_DOUBLE: return .double(basic(&iterator, Double.self))
        case CDBUS_TYPE_UNIX_FD: return .unixFD(basic(&iterator, Int32.self))
        case CDBUS_TYPE_STRING: return .string(text(&iterator))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(text(&iterator))
        case CDBUS_TYPE_SIGNATURE: return .signature(text(&iterator))
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .variant(try read(&sub))
        case CDBUS_TYPE_ARRAY:
            let elementType = try arrayElementType(&iterator)
            if elementType == .byte { return .array(.byte, byteArray(&iterator).map(DBusValue.byte)) }
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .array(elementType, try readAll(&sub))
        case CDBUS_TYPE_DICT_ENTRY:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            let key = try read(&sub)
            dbus_message_iter_next(&sub)
            let value = try read(&sub)
            return .dictEntry(key, value)
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .structure(try readAll(&sub))
        default:
            throw DBusError(.invalidArgs, "unsupported D-Bus type code \(type)")
        }
    }

    /// The bytes of the `ay` the iterator points at, in one copy.
    static func byteArray(_ iterator: inout DBusMessageIter) -> [UInt8] {
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iterator, &sub)
        var pointer: UnsafeMutableRawPointer?
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&sub, &pointer, &count)
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: pointer.assumingMemoryBound(to: UInt8.self), count: Int(count)))
    }

    private static func arrayElementType(_ iterator: inout DBusMessageIter) throws(DBusError) -> DBusType {
        // The iterator tells a basic or variant element type by its code; only containers need the signature,
        // which libdbus copies into a fresh allocation (and parsing it makes more). Property maps are most of
        // those, so `a{sv}` skips the parser.
        let code = dbus_message_iter_get_element_type(&iterator)
        if let code = UInt8(exactly: code), let element = DBusType.single(code: code) { return element }
        guard let raw = dbus_message_iter_get_signature(&iterator) else {
            throw DBusError(.noMemory, "out of memory reading a signature")
        }
        defer { dbus_free(raw) }
        if strcmp(raw, "a{sv}") == 0, case .array(let element) = DBusType.propertyMap { return element }
        let arrayType = try DBusType(signature: String(cString: raw))
        guard case .array(let element) = arrayType else {
            throw DBusError(.invalidSignature, "array iterator reported '\(arrayType.signature)'")
        }
        return element
    }

    private static func basic<T>(_ iterator: inout DBusMessageIter, _: T.Type) -> T {
        // DBusBasicValue is 8 bytes and suitably aligned for every fixed type.
        var storage = DBusBasicValue()
        dbus_message_iter_get_basic(&iterator, &storage)
        return withUnsafeBytes(of: &storage) { $0.load(as: T.self) }
    }

    private static func text(_ iterator: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }
}
