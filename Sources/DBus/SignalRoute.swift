import CDBus
import Glibc

/// A route set up with ``DBusConnection/routeSignals(path:interface:member:sender:to:onReadComplete:)``; pass it to
/// ``DBusConnection/removeRoute(_:)`` to end it.
public struct DBusSignalRoute: Sendable, Hashable {
    let id: UInt64
    /// The object whose signals are routed.
    public let path: String
}

/// Takes a routed signal on the loop thread, read in place (``DBusMessageView``) when it arrived at the instant given:
/// returns true when it took the signal, false to send it the general way, to the subscriptions.
public typealias DBusSignalReader = @Sendable (DBusMessageView, ContinuousClock.Instant) -> Bool

/// What the loop thread keeps for a route.
struct SignalRouteEntry {
    var id: UInt64
    /// The well-known name whose owner must have sent the signal.
    var sender: String
    var interface: String
    var member: String
    var reader: DBusSignalReader
    var onReadComplete: (@Sendable () -> Void)?
}

extension DBusConnection {
    /// Hands every signal `member` of `interface` that the owner of `sender` emits for the object at `path` to
    /// `reader` first, read in place from libdbus's buffer on the loop thread, before any subscription is consulted
    /// and without building ``DBusValue``s: the path for a signal that arrives hundreds of times a second (a
    /// characteristic's notifications as `PropertiesChanged`). A signal `reader` declines reaches the subscriptions
    /// as any other does. While the owner of `sender` is not known (no subscription matching on it), every signal
    /// takes the general path: on a system bus anyone may send a signal for any path. Several routes of one path
    /// each get every signal.
    ///
    /// `reader` runs on the loop thread in arrival order: keep it short and never block in it. `onReadComplete`
    /// runs once after the last signal of a wakeup that a route took, when the wakeup's messages and descriptors are
    /// all dispatched (as SwiftNIO's `channelReadComplete` follows its `channelRead`s).
    @discardableResult
    public func routeSignals(
        path: String,
        interface: String,
        member: String,
        sender: String,
        to reader: @escaping DBusSignalReader,
        onReadComplete: (@Sendable () -> Void)? = nil
    ) -> DBusSignalRoute {
        let route = DBusSignalRoute(id: state.nextCallID(), path: path)
        let entry = SignalRouteEntry(
            id: route.id,
            sender: sender,
            interface: interface,
            member: member,
            reader: reader,
            onReadComplete: onReadComplete
        )
        let state = state
        loop.enqueue { state.addSignalRoute(entry, path: path) }
        return route
    }

    /// Ends a route: its signals take the general path again.
    public func removeRoute(_ route: DBusSignalRoute) {
        let state = state
        loop.enqueue { state.removeSignalRoute(route) }
    }
}

/// A message as libdbus holds it, valid during the call it is given to: its signature, and its arguments read in
/// place (``DBusArgumentReader``).
public struct DBusMessageView {
    let raw: OpaquePointer

    /// Whether the message's signature is exactly `signature`.
    public func hasSignature(_ signature: ContiguousArray<CChar>) -> Bool {
        guard let actual = dbus_message_get_signature(raw) else { return false }
        return signature.withUnsafeBufferPointer { strcmp(actual, $0.baseAddress!) == 0 }
    }

    /// A reader at the first argument; nil when there is none.
    public func arguments() -> DBusArgumentReader? {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iterator) != 0 else { return nil }
        return DBusArgumentReader(iterator: iterator)
    }
}

/// Reads a message's arguments in place, one at a time: the type at the reader, a string compared without copying
/// it, containers entered, fixed-size arrays as bytes. Valid while the message it came from is.
public struct DBusArgumentReader {
    var iterator: DBusMessageIter

    /// The type code at the reader (`DBUS_TYPE_*`; 0 past the last argument).
    public var typeCode: Int32 {
        var copy = iterator
        return dbus_message_iter_get_arg_type(&copy)
    }

    /// The element type code of the array at the reader.
    public var elementTypeCode: Int32 {
        var copy = iterator
        return dbus_message_iter_get_element_type(&copy)
    }

    /// Whether the argument at the reader is a string (or object path) equal to `expected` (NUL-terminated).
    public func isString(_ expected: ContiguousArray<CChar>) -> Bool {
        var copy = iterator
        let type = dbus_message_iter_get_arg_type(&copy)
        guard type == CDBUS_TYPE_STRING || type == CDBUS_TYPE_OBJECT_PATH else { return false }
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&copy, &pointer)
        guard let pointer else { return false }
        return expected.withUnsafeBufferPointer { strcmp(pointer, $0.baseAddress!) == 0 }
    }

    /// Moves to the next argument; false when there is none.
    public mutating func next() -> Bool { dbus_message_iter_next(&iterator) != 0 }

    /// A reader inside the container (array, dictionary entry, variant, structure) at the reader; nil when the
    /// argument there is not a container (a sender chooses what it sends: a reader must never assume).
    public func entered() -> DBusArgumentReader? {
        var copy = iterator
        let type = dbus_message_iter_get_arg_type(&copy)
        guard
            type == CDBUS_TYPE_ARRAY || type == CDBUS_TYPE_VARIANT || type == CDBUS_TYPE_DICT_ENTRY
                || type == CDBUS_TYPE_STRUCT
        else { return nil }
        var inner = DBusMessageIter()
        dbus_message_iter_recurse(&copy, &inner)
        return DBusArgumentReader(iterator: inner)
    }

    /// Calls `body` with the bytes of the byte array at the reader (valid during the call only) and returns its
    /// result; nil, without calling it, when the argument there is not an array of bytes.
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        var copy = iterator
        guard dbus_message_iter_get_arg_type(&copy) == CDBUS_TYPE_ARRAY,
            dbus_message_iter_get_element_type(&copy) == CDBUS_TYPE_BYTE
        else { return nil }
        var inner = DBusMessageIter()
        dbus_message_iter_recurse(&copy, &inner)
        var pointer: UnsafeMutableRawPointer?
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&inner, &pointer, &count)
        return body(UnsafeRawBufferPointer(start: count > 0 ? pointer : nil, count: Int(max(count, 0))))
    }

    /// Type codes a reader reports.
    public static let array = CDBUS_TYPE_ARRAY
    public static let byte = CDBUS_TYPE_BYTE
    public static let variant = CDBUS_TYPE_VARIANT
    public static let dictionaryEntry = CDBUS_TYPE_DICT_ENTRY
    public static let end = CDBUS_TYPE_INVALID
}
