import CDBus
import Glibc
import Synchronization

/// What the loop thread knows about its connection: pending calls, signal subscriptions, exported objects.
/// Only the loop thread reads or writes the stored properties (hence `@unchecked Sendable`); other threads
/// reach it through `LoopThread.enqueue`.
final class LoopState: @unchecked Sendable {
    private var raw: OpaquePointer?
    private weak var loop: LoopThread?
    var owner: WeakConnection?
    let isOpen = Atomic<Bool>(false)
    private let callIDs = Atomic<UInt64>(0)

    struct PendingCall {
        var callID: UInt64
        var continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>
        var description: String
        /// The loop's token for this call's deadline, cancelled when the reply comes.
        var deadline: UInt64 = 0
    }
    private var pending: [UInt32: PendingCall] = [:]
    private var serialByCallID: [UInt64: UInt32] = [:]

    struct Subscription {
        var rule: DBusMatchRule
        /// Ends the subscription's stream (when the connection closes).
        var continuation: AsyncThrowingStream<DBusSignal, any Error>.Continuation
        /// Takes each matching signal: yields it to the stream, or calls the subscriber's handler.
        var deliver: @Sendable (DBusSignal) -> Void
    }
    private var subscriptions: [UInt64: Subscription] = [:]
    private var nameOwners: [String: String] = [:]
    private var watchedOwners: Set<String> = []
    private let watchedOwnersLock = Mutex<Set<String>>([])

    private var objects: [String: DBusObject] = [:]
    private var managers: Set<String> = []
    /// Byte-valued properties read on the fast path, by object path.
    private var byteValueRoutes: [String: [ByteValueRouteEntry]] = [:]
    /// Tasks waiting for the connection to close (any thread adds or removes one; the loop thread resumes them).
    private let closeWaiters = Mutex<CloseWaiters>(CloseWaiters())

    struct CloseWaiters {
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var closed = false
    }

    func nextCallID() -> UInt64 { callIDs.add(1, ordering: .relaxed).newValue }

    /// In debug builds, traps unless the caller runs on the connection's loop thread, which ``attach(_:loop:)``
    /// names; see `LoopThread.assertOnLoopThread`.
    @inline(__always)
    private func assertOnLoopThread(file: StaticString = #fileID, line: UInt = #line) {
        assert(loop?.isCurrent ?? false, "called off the D-Bus connection's loop thread", file: file, line: line)
    }

    /// Loop thread: the connection is open; install the message filter.
    func attach(_ raw: OpaquePointer, loop: LoopThread) {
        loop.assertOnLoopThread()
        self.raw = raw
        self.loop = loop
        loop.onFailure = { [weak self] error in self?.shutDown(error) }
        isOpen.store(true, ordering: .releasing)
        let context = Unmanaged.passRetained(self).toOpaque()
        dbus_connection_add_filter(
            raw,
            { _, message, data in
                let state = Unmanaged<LoopState>.fromOpaque(data!).takeUnretainedValue()
                return state.handle(Message(retaining: message!))
            },
            context,
            { data in Unmanaged<LoopState>.fromOpaque(data!).release() }
        )
    }

    // MARK: Sending

    /// Loop thread: send a method call; `continuation` gets its reply, or an error at `deadline`.
    func send(
        _ message: Message,
        callID: UInt64,
        deadline: ContinuousClock.Instant,
        description: String,
        loop: LoopThread,
        continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>
    ) {
        assertOnLoopThread()
        guard let raw, isOpen.load(ordering: .acquiring) else {
            continuation.resume(returning: .failure(DBusError(.disconnected, "not connected: \(description)")))
            return
        }
        var serial: UInt32 = 0
        guard dbus_connection_send(raw, message.raw, &serial) != 0 else {
            continuation.resume(returning: .failure(DBusError(.noMemory, "out of memory sending \(description)")))
            return
        }
        pending[serial] = PendingCall(callID: callID, continuation: continuation, description: description)
        serialByCallID[callID] = serial
        pending[serial]?.deadline = loop.schedule(at: deadline) { [self, serial] in
            guard let call = pending[serial], call.callID == callID else { return }
            finish(serial, .failure(DBusError(.timeout, "no reply to \(description) in time")))
        }
    }

    /// Loop thread: send a message that expects no reply.
    func sendOnly(_ message: Message) {
        assertOnLoopThread()
        guard let raw, isOpen.load(ordering: .acquiring) else { return }
        dbus_connection_send(raw, message.raw, nil)
    }

    /// Loop thread: fail a pending call, its caller having stopped waiting.
    func cancelCall(_ callID: UInt64) {
        assertOnLoopThread()
        guard let serial = serialByCallID[callID] else { return }
        finish(serial, .failure(DBusError(.failed, "cancelled")))
    }

    private func finish(_ serial: UInt32, _ result: Result<[DBusValue], DBusError>) {
        guard let call = pending.removeValue(forKey: serial) else { return }
        serialByCallID[call.callID] = nil
        loop?.cancelScheduled(call.deadline)
        call.continuation.resume(returning: result)
    }

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
    private func routeByteValue(_ message: Message, interface: String, member: String) -> Bool {
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

    // MARK: Objects

    /// Loop thread: answer calls to `object`.
    func export(_ object: DBusObject) {
        assertOnLoopThread()
        objects[object.path] = object
        if let manager = manager(for: object.path) {
            let interfaces = object.interfacesAndProperties()
            if !interfaces.isEmpty {
                emitInterfacesAdded(manager: manager, path: object.path, interfaces: interfaces)
            }
        }
    }

    /// Loop thread: stop answering calls to the object at `path`.
    func unexport(_ path: String) {
        assertOnLoopThread()
        guard let object = objects.removeValue(forKey: path) else { return }
        object.detach()
        if let manager = manager(for: path) {
            let names = object.interfaceNames()
            if !names.isEmpty { emitInterfacesRemoved(manager: manager, path: path, names: names) }
        }
    }

    /// Loop thread: make `path` an object manager.
    func addObjectManager(_ path: String) {
        assertOnLoopThread()
        managers.insert(path)
        if objects[path] == nil, let connection = owner?.connection {
            let root = DBusObject(path: path)
            root.attach(to: connection)
            objects[path] = root
        }
    }

    /// Loop thread: the object manager whose subtree holds `path` (the nearest ancestor), if any.
    func manager(for path: String) -> String? {
        assertOnLoopThread()
        return managers.filter { $0 != path && Self.isDescendant(path, of: $0) }.max { $0.count < $1.count }
    }

    static func isDescendant(_ path: String, of root: String) -> Bool {
        root == "/" ? path != "/" : path.hasPrefix(root + "/")
    }

    /// Loop thread: announce interfaces added at `path` under `manager`.
    func emitInterfacesAdded(manager: String, path: String, interfaces: [String: [String: DBusValue]]) {
        assertOnLoopThread()
        let value = DBusValue.dictionary(
            key: .string,
            value: DBusType.propertyMap,
            interfaces.sorted { $0.key < $1.key }.map { (.string($0.key), .propertyMap($0.value)) }
        )
        emit(manager, ObjectManager.interface, "InterfacesAdded", [.objectPath(path), value])
    }

    /// Loop thread: announce interfaces removed from `path` under `manager`.
    func emitInterfacesRemoved(manager: String, path: String, names: [String]) {
        assertOnLoopThread()
        emit(manager, ObjectManager.interface, "InterfacesRemoved", [.objectPath(path), .strings(names.sorted())])
    }

    /// Loop thread: emit a signal.
    func emit(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue]) {
        assertOnLoopThread()
        guard let message = try? Message.signal(path: path, interface: interface, member: member) else { return }
        guard (try? message.append(arguments)) != nil else { return }
        sendOnly(message)
    }

    /// Runs `job` on the loop thread (used by objects to emit in order with replies).
    func enqueue(_ job: @escaping @Sendable () -> Void) {
        loop?.enqueue(job)
    }

    // MARK: Incoming

    /// Loop thread: libdbus's filter, for every message the connection dispatches.
    private func handle(_ message: Message) -> DBusHandlerResult {
        assertOnLoopThread()
        switch message.type {
        case MessageType.methodReturn, MessageType.error:
            let serial = message.replySerial
            guard pending[serial] != nil else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            if message.type == MessageType.error {
                finish(serial, .failure(message.asError()))
            } else {
                do {
                    finish(serial, .success(try message.arguments()))
                } catch {
                    finish(serial, .failure(error))
                }
            }
            return DBUS_HANDLER_RESULT_HANDLED
        case MessageType.signal:
            handleSignal(message)
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        case MessageType.methodCall:
            return handleMethodCall(message) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        default:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }

    private func handleSignal(_ message: Message) {
        let interface = message.interface ?? ""
        let member = message.member ?? ""
        if interface == "org.freedesktop.DBus.Local" && member == "Disconnected" {
            shutDown(DBusError(.disconnected, "the bus closed the connection"))
            loop?.stop()
            return
        }
        if !byteValueRoutes.isEmpty, routeByteValue(message, interface: interface, member: member) { return }
        // No signal taken here carries a file descriptor, and reading one would open a copy that nobody closes:
        // anyone on the bus could exhaust the process's descriptors with them.
        guard !message.carriesFileDescriptors, let arguments = try? message.arguments() else { return }
        let signal = DBusSignal(
            sender: message.sender ?? "",
            path: message.path ?? "",
            interface: interface,
            member: member,
            arguments: arguments
        )
        if interface == "org.freedesktop.DBus", member == "NameOwnerChanged", arguments.count == 3,
            let name = arguments[0].string, watchedOwners.contains(name)
        {
            let newOwner = arguments[2].string ?? ""
            nameOwners[name] = newOwner.isEmpty ? nil : newOwner
        }
        for subscription in subscriptions.values {
            let owner = subscription.rule.sender.flatMap { nameOwners[$0] }
            if subscription.rule.matches(signal, senderOwner: owner) {
                subscription.deliver(signal)
            }
        }
    }

    private func handleMethodCall(_ message: Message) -> Bool {
        guard let path = message.path, let member = message.member else { return false }
        let interface = message.interface
        if message.carriesFileDescriptors,
            objects[path]?.takesFileDescriptors(interface: interface, member: member) != true
        {
            // Refused unread, as in handleSignal.
            reply(
                to: message,
                with: .failure(DBusError(.invalidArgs, "\(member) takes no file descriptor"))
            )
            return true
        }
        let call: DBusMethodCall
        do {
            call = DBusMethodCall(
                sender: message.sender ?? "",
                path: path,
                interface: interface,
                member: member,
                arguments: try message.arguments()
            )
        } catch {
            reply(to: message, with: .failure(error))
            return true
        }
        if interface == ObjectManager.interface, managers.contains(path) {
            guard member == "GetManagedObjects" else {
                reply(
                    to: message,
                    with: .failure(DBusError(.unknownMethod, "no method \(member) in \(ObjectManager.interface)"))
                )
                return true
            }
            reply(to: message, with: .success([managedObjects(under: path)]))
            return true
        }
        if interface == Introspection.interface, member == "Introspect" {
            let children = childNames(of: path)
            guard objects[path] != nil || !children.isEmpty else { return false }
            let xml = Introspection.xml(
                for: objects[path],
                isManager: managers.contains(path),
                children: children
            )
            reply(to: message, with: .success([.string(xml)]))
            return true
        }
        guard let object = objects[path] else { return false }
        let noReply = message.noReplyExpected
        let state = self
        Task {
            let result = await object.handle(call)
            // Marshalled here, not on the loop thread: a large answer (a long list of workouts) would hold up every
            // notification waiting behind it.
            guard !noReply, let reply = Self.replyMessage(to: message, with: result) else { return }
            state.enqueue { state.sendOnly(reply) }
        }
        return true
    }

    private func reply(to message: Message, with result: Result<[DBusValue], DBusError>) {
        if let reply = Self.replyMessage(to: message, with: result) { sendOnly(reply) }
    }

    /// The reply to `message` carrying `result`, nil when none is expected. Any thread: the message is not shared
    /// until it is sent.
    private static func replyMessage(to message: Message, with result: Result<[DBusValue], DBusError>) -> Message? {
        // A descriptor a handler returns is handed over: the reply holds a copy of its own.
        defer { if case .success(let values) = result { for fd in values.flatMap(\.unixFDs) { close(fd) } } }
        guard !message.noReplyExpected else { return nil }
        switch result {
        case .success(let values):
            guard let reply = try? message.methodReturn() else { return nil }
            do {
                try reply.append(values)
                return reply
            } catch {
                return message.errorReply(error)
            }
        case .failure(let error):
            return message.errorReply(error)
        }
    }

    private func managedObjects(under root: String) -> DBusValue {
        let entries: [(DBusValue, DBusValue)] = objects.keys.sorted().compactMap { path in
            guard Self.isDescendant(path, of: root), manager(for: path) == root, let object = objects[path] else {
                return nil
            }
            let interfaces = object.interfacesAndProperties()
            guard !interfaces.isEmpty else { return nil }
            let value = DBusValue.dictionary(
                key: .string,
                value: DBusType.propertyMap,
                interfaces.sorted { $0.key < $1.key }.map { (.string($0.key), .propertyMap($0.value)) }
            )
            return (.objectPath(path), value)
        }
        return .dictionary(
            key: .objectPath,
            value: .array(.dictEntry(key: .string, value: DBusType.propertyMap)),
            entries
        )
    }

    private func childNames(of path: String) -> [String] {
        var names = Set<String>()
        for other in objects.keys where Self.isDescendant(other, of: path) {
            let rest = other.dropFirst(path == "/" ? 1 : path.count + 1)
            if let first = rest.split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }

    // MARK: Shutdown

    /// Any thread: returns once the connection has closed (at once if it has), or the calling task is cancelled.
    func waitUntilClosed() async {
        let id = nextCallID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let closed = closeWaiters.withLock { waiters -> Bool in
                    if waiters.closed || Task.isCancelled { return true }
                    waiters.waiting[id] = continuation
                    return false
                }
                if closed { continuation.resume() }
            }
        } onCancel: {
            closeWaiters.withLock { $0.waiting.removeValue(forKey: id) }?.resume()
        }
    }

    /// Loop thread: fail every pending call and end every stream.
    func shutDown(_ error: DBusError) {
        assertOnLoopThread()
        isOpen.store(false, ordering: .releasing)
        let calls = pending
        pending = [:]
        serialByCallID = [:]
        for call in calls.values {
            call.continuation.resume(
                returning: .failure(DBusError(name: error.name, message: "\(error.message) (\(call.description))"))
            )
        }
        let streams = subscriptions
        subscriptions = [:]
        for subscription in streams.values { subscription.continuation.finish(throwing: error) }
        for object in objects.values { object.detach() }
        objects = [:]
        let waiting = closeWaiters.withLock { waiters in
            waiters.closed = true
            defer { waiters.waiting = [:] }
            return waiters.waiting
        }
        for waiter in waiting.values { waiter.resume() }
    }
}

enum ObjectManager {
    static let interface = CDBUS_INTERFACE_OBJECT_MANAGER
}
