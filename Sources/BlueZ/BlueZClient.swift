import DBus
import Foundation
import Synchronization

/// A client of bluetoothd: a cache of its objects kept current from the object-manager signals.
///
/// The match rules are added before `GetManagedObjects` is called, so no change in between is lost, and the cache
/// is rebuilt whenever the owner of `org.bluez` changes (bluetoothd restarted). Typed views (``Adapter``,
/// ``BluetoothDevice``, ``GattCharacteristic``) are value identities (a path) that read the cache when asked.
public final class BlueZClient: Sendable {
    /// The bus connection every call goes through.
    public let connection: DBusConnection

    typealias Objects = [String: [String: [String: DBusValue]]]
    private struct State {
        var objects: Objects = [:]
        var serviceRunning = false
        var serviceGeneration = 0
        var sinks: [UInt64: Sink] = [:]
        /// Sink ids by the path they watch ("" for all), so an event finds its sinks by walking up its own path
        /// instead of testing every sink (a daemon with many sensors has hundreds).
        var sinksByPrefix: [String: Set<UInt64>] = [:]
        /// The handlers for each path events came from, worked out once: a notifying characteristic sends the
        /// same path hundreds of times a second. Emptied whenever a sink comes or goes.
        var handlersByPath: [String: [@Sendable (BlueZEvent) -> Void]] = [:]
        var nextSinkID: UInt64 = 0
        var tasks: [Task<Void, Never>] = []
        /// Signals held while the cache is reloaded (see SignalHold).
        var hold = SignalHold<DBusSignal>()
    }
    private struct Sink {
        var pathPrefix: String?
        var handler: @Sendable (BlueZEvent) -> Void
    }
    private let state = Mutex(State())

    private init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Starts watching bluetoothd on `connection` and loads its objects. Succeeds even when bluetoothd is not
    /// running (``isServiceRunning`` is false and the cache fills when it starts).
    public static func connect(_ connection: DBusConnection) async throws(BlueZError) -> BlueZClient {
        let client = BlueZClient(connection: connection)
        do {
            // Owner changes are rare and their handling awaits: they go to a task of their own, in order.
            let (owners, ownerChanges) = AsyncStream<Bool>.makeStream()
            let ownerSubscription = try await connection.subscribe(
                to: DBusMatchRule(
                    sender: "org.freedesktop.DBus",
                    path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus",
                    member: "NameOwnerChanged",
                    arg0: BlueZ.service
                )
            ) { signal in
                let newOwner = signal.arguments.count > 2 ? signal.arguments[2].string ?? "" : ""
                ownerChanges.yield(!newOwner.isEmpty)
            }
            // Signals are taken on the connection's loop thread as they arrive: with many sensors notifying, a task
            // of our own would be woken, and each signal queued for it, hundreds of times a second.
            let signals = try await connection.subscribe(to: DBusMatchRule(sender: BlueZ.service)) {
                [weak client] signal in client?.take(signal)
            }
            try await client.reload()
            let signalTask = Task { _ = try? await signals.ended() }
            let ownerTask = Task { [weak client] in
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try? await ownerSubscription.ended()
                        ownerChanges.finish()
                    }
                    for await running in owners { await client?.ownerChanged(running: running) }
                    group.cancelAll()
                }
            }
            client.state.withLock { $0.tasks = [signalTask, ownerTask] }
        } catch {
            throw BlueZError(error)
        }
        return client
    }

    /// Stops watching (the connection stays open; close it separately).
    public func close() {
        let (tasks, sinks, memo) = state.withLock { state in
            defer {
                state.tasks = []
                state.sinks = [:]
                state.sinksByPrefix = [:]
                state.handlersByPath = [:]
            }
            return (state.tasks, state.sinks, state.handlersByPath)
        }
        for task in tasks { task.cancel() }
        // Dropped here, outside the lock: releasing a stream's continuation may call back into removeSink.
        withExtendedLifetime((sinks, memo)) {}
    }

    deinit {
        for task in state.withLock({ $0.tasks }) { task.cancel() }
    }

    /// Whether bluetoothd currently owns `org.bluez`.
    public var isServiceRunning: Bool { state.withLock { $0.serviceRunning } }

    /// Counts the bluetoothd processes seen: it changes when bluetoothd restarts, which forgets every
    /// registration (agents, GATT applications) made with the one before.
    public var serviceGeneration: Int { state.withLock { $0.serviceGeneration } }

    // MARK: Cache

    /// Replaces the cache with bluetoothd's current objects (empty when it is not running).
    private func reload() async throws(DBusError) {
        state.withLock { $0.hold.beginReload() }
        var objects: Objects = [:]
        var running = true
        do {
            let reply = try await connection.call(
                destination: BlueZ.service,
                path: "/",
                interface: BlueZ.Interface.objectManager,
                method: "GetManagedObjects"
            )
            for entry in reply.first?.dictionaryEntries ?? [] {
                guard let path = entry.key.string else { continue }
                objects[path] = Self.interfaces(entry.value)
            }
        } catch  where error.is(.serviceUnknown) || error.is(.nameHasNoOwner) {
            running = false
        } catch {
            state.withLock { $0.hold.endReload() }
            replayHeld()
            throw error
        }
        state.withLock { state in
            state.objects = objects
            if running && !state.serviceRunning { state.serviceGeneration += 1 }
            state.serviceRunning = running
            state.hold.endReload()
        }
        replayHeld()
    }

    /// A signal from bluetoothd, on the connection's loop thread: applied now, or held while a reload is under way.
    private func take(_ signal: DBusSignal) {
        if state.withLock({ $0.hold.take(signal) }) { apply(signal) }
    }

    /// Applies the signals held during reloads, once none is under way (one caller at a time, in order).
    private func replayHeld() {
        var isReplayer = false
        while let batch = state.withLock({ $0.hold.nextBatch(isReplayer: &isReplayer) }) {
            for signal in batch { apply(signal) }
        }
    }

    private func ownerChanged(running: Bool) async {
        if running {
            // A new bluetoothd: nothing of the old one survives; load what the new one has.
            try? await reload()
            dispatch(.serviceStarted, path: nil)
        } else {
            state.withLock { state in
                state.objects = [:]
                state.serviceRunning = false
            }
            dispatch(.serviceStopped, path: nil)
        }
    }

    /// `a{sa{sv}}` → interface → property map.
    private static func interfaces(_ value: DBusValue) -> [String: [String: DBusValue]] {
        var result: [String: [String: DBusValue]] = [:]
        for entry in value.dictionaryEntries ?? [] {
            guard let name = entry.key.string else { continue }
            result[name] = entry.value.propertyMap ?? [:]
        }
        return result
    }

    private func apply(_ signal: DBusSignal) {
        switch (signal.interface, signal.member) {
        case (BlueZ.Interface.objectManager, "InterfacesAdded"):
            guard signal.arguments.count == 2, let path = signal.arguments[0].string else { return }
            let added = Self.interfaces(signal.arguments[1])
            state.withLock { state in
                state.objects[path, default: [:]].merge(added) { _, new in new }
            }
            dispatch(.interfacesAdded(path: path, interfaces: added), path: path)
        case (BlueZ.Interface.objectManager, "InterfacesRemoved"):
            guard signal.arguments.count == 2, let path = signal.arguments[0].string,
                let names = signal.arguments[1].strings
            else { return }
            state.withLock { state in
                for name in names { state.objects[path]?.removeValue(forKey: name) }
                if state.objects[path]?.isEmpty == true { state.objects.removeValue(forKey: path) }
            }
            dispatch(.interfacesRemoved(path: path, interfaces: names), path: path)
        case (BlueZ.Interface.properties, "PropertiesChanged"):
            guard signal.arguments.count == 3, let interface = signal.arguments[0].string,
                let changed = signal.arguments[1].propertyMap
            else { return }
            let invalidated = signal.arguments[2].strings ?? []
            let change = PropertiesChange(
                path: signal.path,
                interface: interface,
                changed: changed,
                invalidated: invalidated,
                receivedAt: .now,
                receivedDate: Date()
            )
            state.withLock { state in
                guard state.objects[signal.path]?[interface] != nil else { return }
                state.objects[signal.path]![interface]!.merge(changed) { _, new in new }
                for name in invalidated { state.objects[signal.path]![interface]!.removeValue(forKey: name) }
            }
            dispatch(.propertiesChanged(change), path: signal.path)
        default:
            return
        }
    }

    private func dispatch(_ event: BlueZEvent, path: String?) {
        let handlers = state.withLock { state -> [@Sendable (BlueZEvent) -> Void] in
            guard let path else { return state.sinks.values.map(\.handler) }
            if let known = state.handlersByPath[path] { return known }
            var ids = state.sinksByPrefix[""] ?? []
            var index = path.startIndex
            while index < path.endIndex {
                let next = path[path.index(after: index)...].firstIndex(of: "/") ?? path.endIndex
                if let found = state.sinksByPrefix[String(path[..<next])] { ids.formUnion(found) }
                index = next
            }
            // In sink order, so handlers run in the order they were added.
            let handlers = ids.sorted().compactMap { state.sinks[$0]?.handler }
            // Paths of objects long gone would pile up; a daemon has a few hundred live ones.
            if state.handlersByPath.count > 4096 { state.handlersByPath = [:] }
            state.handlersByPath[path] = handlers
            return handlers
        }
        for handler in handlers { handler(event) }
    }

    /// Calls `handler` for every event at `pathPrefix` or below it (all events when nil), plus the service
    /// started/stopped events, until the returned token is passed to ``removeSink(_:)``. The handler runs where
    /// events happen: on the connection's loop thread, or on the task that follows bluetoothd's restarts (which
    /// also applies the signals held while it reloaded the cache). Keep it short and never block.
    func addSink(pathPrefix: String?, _ handler: @escaping @Sendable (BlueZEvent) -> Void) -> UInt64 {
        state.withLock { state in
            state.nextSinkID += 1
            state.sinks[state.nextSinkID] = Sink(pathPrefix: pathPrefix, handler: handler)
            state.sinksByPrefix[pathPrefix ?? "", default: []].insert(state.nextSinkID)
            state.handlersByPath = [:]
            return state.nextSinkID
        }
    }

    func removeSink(_ id: UInt64) {
        // The removed sink is returned and released after the lock is let go (see close()).
        _ = state.withLock { state -> Sink? in
            guard let sink = state.sinks.removeValue(forKey: id) else { return nil }
            // Safe inside the lock: every handler the memo holds is still held by its sink (this one by `sink`).
            state.handlersByPath = [:]
            let prefix = sink.pathPrefix ?? ""
            state.sinksByPrefix[prefix]?.remove(id)
            if state.sinksByPrefix[prefix]?.isEmpty == true { state.sinksByPrefix.removeValue(forKey: prefix) }
            return sink
        }
    }

    /// Events at `pathPrefix` or below (every event when nil), plus service started/stopped, that `isIncluded`
    /// accepts. The stream ends when the consumer stops iterating.
    ///
    /// `isIncluded` runs on the connection's loop thread before the event is queued: with many sensors streaming,
    /// leaving out the notifications a consumer does not want saves waking it for each of them. The values of a
    /// notify session this client holds open (``GattCharacteristic/notifications(routesValues:onValue:)``) go to that session
    /// alone, read on the bus's fast path: they reach no stream here and leave the cached `Value` as it was.
    public func events(
        under pathPrefix: String? = nil,
        where isIncluded: (@Sendable (BlueZEvent) -> Bool)? = nil
    ) -> AsyncStream<BlueZEvent> {
        let (stream, continuation) = AsyncStream<BlueZEvent>.makeStream()
        let id = addSink(pathPrefix: pathPrefix) { event in
            if isIncluded?(event) ?? true { continuation.yield(event) }
        }
        continuation.onTermination = { [weak self] _ in self?.removeSink(id) }
        return stream
    }

    // MARK: Reading the cache

    /// The properties of `interface` on the object at `path`, or nil when the object lacks it.
    public func properties(of path: String, _ interface: String) -> [String: DBusValue]? {
        state.withLock { $0.objects[path]?[interface] }
    }

    /// One property value from the cache.
    public func property(_ path: String, _ interface: String, _ name: String) -> DBusValue? {
        state.withLock { $0.objects[path]?[interface]?[name] }
    }

    /// The paths of every object implementing `interface`, sorted, optionally only below `parent`.
    public func paths(implementing interface: String, under parent: String? = nil) -> [String] {
        state.withLock { state in
            state.objects.compactMap { path, interfaces -> String? in
                guard interfaces[interface] != nil else { return nil }
                if let parent, !path.hasPrefix(parent + "/") { return nil }
                return path
            }
        }.sorted()
    }

    // MARK: Typed views

    /// Every adapter, in path order (`hci0`, `hci1`, …).
    public var adapters: [Adapter] {
        paths(implementing: BlueZ.Interface.adapter).map { Adapter(client: self, path: $0) }
    }

    /// The adapter named `name` (`hci1`), or the first powered adapter when nil.
    ///
    /// Errors say what to do: bluetoothd not running, no adapter at all, no such adapter, or none powered.
    public func adapter(named name: String?) throws(BlueZError) -> Adapter {
        guard isServiceRunning else {
            throw BlueZError(
                .serviceUnknown,
                "bluetoothd is not running (nobody owns org.bluez on the bus): start it with "
                    + "'systemctl start bluetooth'"
            )
        }
        let all = adapters
        guard !all.isEmpty else {
            throw BlueZError(.doesNotExist, "no Bluetooth adapter found: plug one in or check 'rfkill list'")
        }
        if let name {
            guard let adapter = all.first(where: { $0.name == name }) else {
                let names = all.map(\.name).joined(separator: ", ")
                throw BlueZError(.doesNotExist, "no adapter named \(name) (found: \(names))")
            }
            guard adapter.isPowered else {
                throw BlueZError(.notReady, "adapter \(name) is off: turn it on with 'bluetoothctl power on'")
            }
            return adapter
        }
        guard let powered = all.first(where: { $0.isPowered }) else {
            throw BlueZError(
                .notReady,
                "no powered adapter (\(all.map(\.name).joined(separator: ", ")) off): turn one on with "
                    + "'bluetoothctl power on' or pass --adapter"
            )
        }
        return powered
    }

    /// The adapters a sensor may use: the one named `name`, or every powered adapter when nil (in path order), so
    /// that a sensor in range of any of them is found.
    ///
    /// Errors are those of ``adapter(named:)``.
    public func poweredAdapters(named name: String?) throws(BlueZError) -> [Adapter] {
        let first = try adapter(named: name)
        guard name == nil else { return [first] }
        return adapters.filter(\.isPowered)
    }

    /// Every known device, in path order.
    public var devices: [BluetoothDevice] {
        paths(implementing: BlueZ.Interface.device).map { BluetoothDevice(client: self, path: $0) }
    }
}
