import CDBus
import Glibc
import Synchronization

/// Signals: subscriptions, the owners of watched names, and the routes that read signals in place on the fast path.
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

    /// Loop thread: routes `path`'s signals to the entry's reader too (each session of the path has its own).
    func addSignalRoute(_ entry: SignalRouteEntry, path: String) {
        assertOnLoopThread()
        signalRoutes[path, default: []].append(entry)
    }

    /// Loop thread: ends `route`.
    func removeSignalRoute(_ route: DBusSignalRoute) {
        assertOnLoopThread()
        signalRoutes[route.path]?.removeAll { $0.id == route.id }
        if signalRoutes[route.path]?.isEmpty == true { signalRoutes.removeValue(forKey: route.path) }
    }

    /// Hands `message` to the readers of its path's routes; false when it is not for a route or no reader took it
    /// (the general path then takes it). Routes of one path share their sender, interface and member (one
    /// characteristic's notifications); the first route's are checked.
    func routeSignal(_ message: Message, interface: String, member: String) -> Bool {
        guard let path = message.path, let routes = signalRoutes[path], let first = routes.first,
            first.member == member, first.interface == interface
        else { return false }
        // Only the owner the route names may feed it: on the system bus anyone can send a signal for any path.
        guard let owner = nameOwners[first.sender], message.sender == owner else { return false }
        let receivedAt = ContinuousClock.now
        let view = DBusMessageView(raw: message.raw)
        var taken = false
        for route in routes where route.reader(view, receivedAt) {
            taken = true
            if let complete = route.onReadComplete { loop?.readComplete(route.id, complete) }
        }
        return taken
    }
}
