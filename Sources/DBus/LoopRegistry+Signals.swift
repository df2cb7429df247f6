import CDBus
import Glibc
import Synchronization

/// Signals: subscriptions, the owners of watched names, and the byte-valued properties routed on the fast path.
extension LoopRegistry {
    // MARK: Signals

    /// Loop thread: deliver the signals `rule` matches until ``removeSubscription(_:)``.
    func addSubscription(
        _ id: UInt64,
        rule: DBusMatchRule,
        continuation: AsyncThrowingStream<DBusSignal, any Error>.Continuation,
        deliver: @escaping @Sendable (DBusSignal) -> Void
    ) {
        assertOnLoopThread()
        guard isOpen.load(ordering: .acquiring) else {
            continuation.finish(throwing: DBusError(.disconnected, "not connected"))
            return
        }
        subscriptions[id] = Subscription(rule: rule, continuation: continuation, deliver: deliver)
    }

    /// Loop thread: end a subscription and remove its match rule from the bus.
    func removeSubscription(_ id: UInt64) {
        assertOnLoopThread()
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        // Another subscription may still need the same rule; the bus counts AddMatch calls, so one RemoveMatch
        // per AddMatch keeps it right.
        if let message = try? Message.methodCall(
            destination: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "RemoveMatch"
        ) {
            dbus_message_set_no_reply(message.raw, 1)
            try? message.append([.string(subscription.rule.description)])
            sendOnly(message)
        }
    }

    /// Any thread: returns true the first time it is asked for `name`.
    func beginOwnerWatch(_ name: String) -> Bool {
        watchedOwnersLock.withLock { $0.insert(name).inserted }
    }

    /// Loop thread: the owner of a watched name when the watch began (unless a change came first).
    func seedOwner(_ name: String, _ owner: String?) {
        assertOnLoopThread()
        watchedOwners.insert(name)
        if nameOwners[name] == nil { nameOwners[name] = owner }
    }

    /// Loop thread: routes `path`'s property to the entry's handler too (each session of the path has its own).
    func addByteValueRoute(_ entry: ByteValueRouteEntry, path: String) {
        assertOnLoopThread()
        byteValueRoutes[path, default: []].append(entry)
    }

    /// Loop thread: ends `route`.
    func removeByteValueRoute(_ route: DBusByteValueRoute) {
        assertOnLoopThread()
        byteValueRoutes[route.path]?.removeAll { $0.id == route.id }
        if byteValueRoutes[route.path]?.isEmpty == true { byteValueRoutes.removeValue(forKey: route.path) }
    }

    /// Hands a routed property's bytes to its handlers; false when `message` is not for a route or says more than
    /// the one property (the general path then takes it). Routes of one path share their sender, interface and
    /// property (one characteristic's Value); the first route's are checked.
    func routeByteValue(_ message: Message, interface: String, member: String) -> Bool {
        guard member == "PropertiesChanged", interface == Properties.interface, let path = message.path,
            let routes = byteValueRoutes[path], let route = routes.first
        else { return false }
        // Only the owner the route names may feed it: on the system bus anyone can send a signal for any path.
        guard let owner = nameOwners[route.sender], message.sender == owner else { return false }
        let receivedAt = ContinuousClock.now
        return ByteValueChange.read(message.raw, interface: route.interface, property: route.property) { bytes in
            for route in routes {
                route.handler(bytes, receivedAt)
                if let complete = route.onReadComplete { loop?.readComplete(route.id, complete) }
            }
        }
    }
}
