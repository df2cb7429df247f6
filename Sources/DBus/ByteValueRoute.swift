import Synchronization

/// A route set up with ``DBusConnection/routeByteValue(of:interface:path:sender:to:)``; pass it to
/// ``DBusConnection/removeRoute(_:)`` to end it.
public struct DBusByteValueRoute: Sendable, Hashable {
    let id: UInt64
    /// The object whose property is routed.
    public let path: String
}

/// Takes one routed value on the loop thread: the bytes (valid during the call only) and when they were read.
public typealias DBusByteValueHandler = @Sendable (UnsafeRawBufferPointer, ContinuousClock.Instant) -> Void

/// What the loop thread keeps for a route.
struct ByteValueRouteEntry {
    var id: UInt64
    /// The well-known name whose owner must have sent the signal.
    var sender: String
    var interface: ContiguousArray<CChar>
    var property: ContiguousArray<CChar>
    var handler: DBusByteValueHandler
    var onReadComplete: (@Sendable () -> Void)?
}

extension DBusConnection {
    /// Sends the bytes of `property` (an `ay`) of the object at `path` straight to `handler` whenever the owner of
    /// `sender` signals a `PropertiesChanged` of `interface` that changes that property alone: read from libdbus's
    /// buffer on the loop thread, without building `DBusValue`s and before any subscription is consulted.
    ///
    /// It is the path for a characteristic's notifications (BlueZ's `Value` of `GattCharacteristic1`), which
    /// arrive hundreds of times a second in a daemon with many sensors. A routed signal reaches `handler` only; a
    /// signal that changes more than the property, or invalidates one, reaches the subscriptions as any other
    /// does, so a subscriber that also handles `property` there misses nothing. While the owner of `sender` is not
    /// known (no subscription matching on it), every signal takes the general path. Several routes of one path
    /// (two sessions of one characteristic) each get every value.
    ///
    /// `handler` runs on the loop thread in arrival order: keep it short and never block in it. `onReadComplete`
    /// runs once after the last value of a wakeup has gone to `handler`, when the wakeup's messages and sockets are
    /// all dispatched (as SwiftNIO's `channelReadComplete` follows its `channelRead`s): the time to hand on
    /// together what one read brought.
    @discardableResult
    public func routeByteValue(
        of property: String,
        interface: String,
        path: String,
        sender: String,
        to handler: @escaping DBusByteValueHandler,
        onReadComplete: (@Sendable () -> Void)? = nil
    ) -> DBusByteValueRoute {
        let route = DBusByteValueRoute(id: state.nextCallID(), path: path)
        let entry = ByteValueRouteEntry(
            id: route.id,
            sender: sender,
            interface: ContiguousArray(interface.utf8CString),
            property: ContiguousArray(property.utf8CString),
            handler: handler,
            onReadComplete: onReadComplete
        )
        let state = state
        loop.enqueue { state.addByteValueRoute(entry, path: path) }
        return route
    }

    /// Ends a route: its property's signals take the general path again.
    public func removeRoute(_ route: DBusByteValueRoute) {
        let state = state
        loop.enqueue { state.removeByteValueRoute(route) }
    }
}
