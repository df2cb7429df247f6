import CDBus
import Synchronization

/// A connection to a message bus, driven by its own thread (see `LoopThread`).
///
/// All methods are safe to call from any task; none blocks the cooperative thread pool. Create one with
/// ``connect(to:)``; close it with ``close()`` (it also closes when the bus goes away, failing pending calls
/// with `org.freedesktop.DBus.Error.Disconnected` and ending every signal stream).
public final class DBusConnection: Sendable {
    let loop: LoopThread
    /// Loop-thread state; `@unchecked` because only the loop thread touches it.
    let state: LoopRegistry
    /// This connection's unique name on the bus (`:1.42`).
    public let uniqueName: String
    private let closedFlag = Atomic<Bool>(false)

    private init(loop: LoopThread, state: LoopRegistry, uniqueName: String) {
        self.loop = loop
        self.state = state
        self.uniqueName = uniqueName
    }

    /// Opens a private connection to `bus` and registers on it (`Hello`).
    ///
    /// Throws `org.freedesktop.DBus.Error.Timeout` when the bus has not answered within 25 seconds, and gives up
    /// as well when the calling task is cancelled.
    ///
    /// - Parameter coalescing: the least time between two reads of the bus. Zero (the default) reads each
    ///   message as it arrives. A daemon taking hundreds of signals a second passes a few milliseconds: it then
    ///   wakes once per tick for everything that arrived, and replies and signals wait at most that long.
    public static func connect(
        to bus: DBusBus,
        coalescing: Duration = .zero
    ) async throws(DBusError) -> DBusConnection {
        try await connect(to: bus, coalescing: coalescing, timeout: .seconds(25), spawnThread: spawnDetachedThread)
    }

    /// ``connect(to:coalescing:)`` with what tests replace: how long to wait for the bus to answer, and how the
    /// loop thread starts.
    static func connect(
        to bus: DBusBus,
        coalescing: Duration,
        timeout: Duration,
        spawnThread: ThreadSpawner
    ) async throws(DBusError) -> DBusConnection {
        _ = dbus_threads_init_default()
        let loop = try LoopThread(coalescing: coalescing)
        let state = LoopRegistry()
        let result = await ConnectWaiter().outcome(connecting: bus, within: timeout) { waiter throws(DBusError) in
            // libdbus connects on the loop thread, so a thread that cannot start leaves nothing to close.
            try loop.start(spawn: spawnThread) { loop in
                switch Self.open(bus) {
                case .failure(let error):
                    waiter.finish(.failure(error))
                    return nil
                case .success(let raw):
                    guard let continuation = waiter.takeWaiting() else {
                        // Too late: the caller has given up, and nobody else will ever use this connection.
                        dbus_connection_close(raw)
                        dbus_connection_unref(raw)
                        return nil
                    }
                    state.attach(raw, loop: loop)
                    let name = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
                    continuation.resume(returning: .success(name))
                    return raw
                }
            }
        }
        let name = try result.get()
        let connection = DBusConnection(loop: loop, state: state, uniqueName: name)
        state.owner = WeakConnection(connection)
        return connection
    }

    /// Runs on the loop thread: libdbus's connect and Hello block, which is fine there.
    private static func open(_ bus: DBusBus) -> Result<OpaquePointer, DBusError> {
        var error = DBusError_C()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let raw: OpaquePointer?
        switch bus {
        case .system: raw = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .session: raw = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        case .address(let address):
            raw = dbus_connection_open_private(address, &error)
            if let raw, dbus_bus_register(raw, &error) == 0 {
                dbus_connection_close(raw)
                dbus_connection_unref(raw)
                return .failure(Self.convert(error, bus: bus))
            }
        }
        guard let raw else { return .failure(Self.convert(error, bus: bus)) }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        return .success(raw)
    }

    private static func convert(_ error: DBusError_C, bus: DBusBus) -> DBusError {
        let name = error.name.map { String(cString: $0) } ?? DBusError.Name.failed.rawValue
        let message = error.message.map { String(cString: $0) } ?? ""
        return DBusError(name: name, message: "cannot connect to the \(bus) bus: \(message)")
    }

    /// Whether the connection is still open.
    public var isConnected: Bool { !closedFlag.load(ordering: .acquiring) && state.isOpen.load(ordering: .acquiring) }

    /// Returns once the connection has closed, by ``close()`` or because the bus went away, or when the calling task
    /// is cancelled. Waiting costs nothing: no timer runs meanwhile.
    public func waitUntilClosed() async {
        if !isConnected { return }
        await state.waitUntilClosed()
    }

    /// Closes the connection: pending calls fail, signal streams end, exported objects disappear from the bus.
    public func close() {
        guard !closedFlag.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Self.stopLoop(loop, state)
    }

    deinit {
        if !closedFlag.load(ordering: .acquiring) { Self.stopLoop(loop, state) }
    }

    private static func stopLoop(_ loop: LoopThread, _ state: LoopRegistry) {
        loop.enqueue {
            state.shutDown(DBusError(.disconnected, "the connection was closed"))
            loop.stop()
        }
    }

    // MARK: Method calls

    /// Calls a method and returns its reply's arguments, or throws the error reply.
    ///
    /// - Parameter timeout: how long to wait for the reply before failing with
    ///   `org.freedesktop.DBus.Error.Timeout`.
    public func call(
        destination: String?,
        path: String,
        interface: String?,
        method: String,
        arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        let message = try Message.methodCall(
            destination: destination,
            path: path,
            interface: interface,
            member: method
        )
        try message.append(arguments)
        let description = "\(interface.map { $0 + "." } ?? "")\(method) on \(path)"
        let id = state.nextCallID()
        let state = state
        let result: Result<[DBusValue], DBusError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let queued = loop.enqueue { [loop] in
                    state.send(
                        message,
                        callID: id,
                        deadline: .now + timeout,
                        description: description,
                        loop: loop,
                        continuation: continuation
                    )
                }
                if !queued {
                    continuation.resume(returning: .failure(DBusError(.disconnected, "not connected: \(description)")))
                }
            }
        } onCancel: {
            loop.enqueue { state.cancelCall(id) }
        }
        return try result.get()
    }

    // MARK: Signals

    /// Emits a signal from `path`.
    public func emit(path: String, interface: String, member: String, arguments: [DBusValue] = []) throws(DBusError) {
        let message = try Message.signal(path: path, interface: interface, member: member)
        try message.append(arguments)
        let state = state
        guard isConnected, loop.enqueue({ state.sendOnly(message) }) else {
            throw DBusError(.disconnected, "not connected: cannot emit \(interface).\(member)")
        }
    }

    /// Subscribes to the signals `rule` matches: each goes to `onSignal` as it arrives, in order, on the
    /// connection's loop thread. Keep `onSignal` short and never block in it (nothing on this connection is
    /// answered meanwhile); a consumer that wants its own task yields into a stream of its own from here.
    ///
    /// The match rule is in place on the bus when this returns, so no signal sent afterwards is missed. The
    /// subscription lasts while a task waits in ``DBusSubscription/ended()``: it ends (and the rule is removed)
    /// when that task is cancelled, and when the connection closes. This is the binding's one way to take signals;
    /// a busy service's signals reach their consumer without a task wakeup or a queued copy each.
    public func subscribe(
        to rule: DBusMatchRule,
        onSignal: @escaping @Sendable (DBusSignal) -> Void
    ) async throws(DBusError) -> DBusSubscription {
        let (stream, continuation) = AsyncThrowingStream<DBusSignal, any Error>.makeStream()
        let id = state.nextCallID()
        let state = state
        let trackOwner = rule.sender.map { !$0.hasPrefix(":") && $0 != "org.freedesktop.DBus" } ?? false
        // Register locally first so a signal that arrives right after AddMatch is delivered.
        guard loop.enqueue({ state.addSubscription(id, rule: rule, continuation: continuation, deliver: onSignal) })
        else {
            throw DBusError(.disconnected, "not connected: cannot subscribe to \(rule)")
        }
        continuation.onTermination = { [loop] _ in
            loop.enqueue { state.removeSubscription(id) }
        }
        if trackOwner, let name = rule.sender {
            try await watchOwner(of: name)
        }
        do {
            _ = try await callBus("AddMatch", [.string(rule.description)])
        } catch {
            continuation.finish(throwing: error)
            throw error
        }
        return DBusSubscription(stream)
    }

    /// Keeps the local owner map for a well-known name current (used to match signals by sender).
    private func watchOwner(of name: String) async throws(DBusError) {
        let rule = DBusMatchRule(
            sender: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged",
            arg0: name
        )
        let state = state
        guard state.beginOwnerWatch(name) else { return }
        _ = try await callBus("AddMatch", [.string(rule.description)])
        let owner = try? await nameOwner(of: name)
        loop.enqueue { state.seedOwner(name, owner) }
    }

    // MARK: Bus names

    /// Calls a method of the bus daemon itself (`org.freedesktop.DBus`).
    private func callBus(_ method: String, _ arguments: [DBusValue]) async throws(DBusError) -> [DBusValue] {
        try await call(
            destination: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            method: method,
            arguments: arguments
        )
    }

    /// The unique name currently owning `name`, or nil when nobody does.
    public func nameOwner(of name: String) async throws(DBusError) -> String? {
        do {
            let reply = try await callBus("GetNameOwner", [.string(name)])
            return reply.first?.string
        } catch  where error.is(.nameHasNoOwner) {
            return nil
        }
    }

    /// Result of ``requestName(_:flags:)``.
    public enum RequestNameReply: UInt32, Sendable {
        case primaryOwner = 1
        case inQueue = 2
        case exists = 3
        case alreadyOwner = 4
    }

    /// Flags for ``requestName(_:flags:)``.
    public struct RequestNameFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let allowReplacement = RequestNameFlags(rawValue: 0x1)
        public static let replaceExisting = RequestNameFlags(rawValue: 0x2)
        public static let doNotQueue = RequestNameFlags(rawValue: 0x4)
    }

    /// Asks the bus for a well-known name.
    @discardableResult
    public func requestName(
        _ name: String,
        flags: RequestNameFlags = [.doNotQueue]
    ) async throws(DBusError) -> RequestNameReply {
        let reply = try await callBus("RequestName", [.string(name), .uint32(flags.rawValue)])
        guard let code = reply.first?.int64, let result = RequestNameReply(rawValue: UInt32(code)) else {
            throw DBusError(.failed, "unexpected RequestName reply \(reply)")
        }
        return result
    }

    /// Gives up a well-known name.
    public func releaseName(_ name: String) async throws(DBusError) {
        _ = try await callBus("ReleaseName", [.string(name)])
    }

    // MARK: Exported objects

    /// Makes `object` answer method calls at its path. When an object manager covers the path, its interfaces
    /// are announced with `InterfacesAdded`.
    public func export(_ object: DBusObject) {
        object.attach(to: self)
        let state = state
        loop.enqueue { state.export(object) }
    }

    /// Removes the object at `path` (announced with `InterfacesRemoved` under an object manager).
    public func unexport(path: String) {
        let state = state
        loop.enqueue { state.unexport(path) }
    }

    /// Makes `path` an `org.freedesktop.DBus.ObjectManager` for every exported object below it (creating an
    /// empty object there if none is exported).
    public func addObjectManager(at path: String) {
        let state = state
        loop.enqueue { state.addObjectManager(path) }
    }
}

/// The signals a subscription receives. Iterate it from one task.
/// A subscription made by ``DBusConnection/subscribe(to:onSignal:)``: it lasts while a task waits in ``ended()``.
public struct DBusSubscription: Sendable {
    /// Carries no signals: it finishes, or throws, when the subscription ends.
    let base: AsyncThrowingStream<DBusSignal, any Error>

    init(_ base: AsyncThrowingStream<DBusSignal, any Error>) {
        self.base = base
    }

    /// Returns when the connection closes; throws `DBusError` when it was lost. Cancelling the waiting task ends
    /// the subscription and removes its match rule.
    public func ended() async throws {
        for try await _ in base {}
    }
}

final class WeakConnection: @unchecked Sendable {
    weak var connection: DBusConnection?
    init(_ connection: DBusConnection) { self.connection = connection }
}
