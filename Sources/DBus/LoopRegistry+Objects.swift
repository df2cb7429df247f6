import CDBus
import Glibc
import Synchronization

/// Exported objects and the messages that reach them: method calls, introspection, the object manager.
extension LoopRegistry {
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
    func handle(_ message: Message) -> DBusHandlerResult {
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

    func handleSignal(_ message: Message) {
        let interface = message.interface ?? ""
        let member = message.member ?? ""
        if interface == "org.freedesktop.DBus.Local" && member == "Disconnected" {
            shutDown(DBusError(.disconnected, "the bus closed the connection"))
            loop?.stop()
            return
        }
        if !signalRoutes.isEmpty, routeSignal(message, interface: interface, member: member) { return }
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

    func handleMethodCall(_ message: Message) -> Bool {
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

    func reply(to message: Message, with result: Result<[DBusValue], DBusError>) {
        if let reply = Self.replyMessage(to: message, with: result) { sendOnly(reply) }
    }

    /// The reply to `message` carrying `result`, nil when none is expected. Any thread: the message is not shared
    /// until it is sent.
    static func replyMessage(to message: Message, with result: Result<[DBusValue], DBusError>) -> Message? {
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

    func managedObjects(under root: String) -> DBusValue {
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

    func childNames(of path: String) -> [String] {
        var names = Set<String>()
        for other in objects.keys where Self.isDescendant(other, of: path) {
            let rest = other.dropFirst(path == "/" ? 1 : path.count + 1)
            if let first = rest.split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }
}

enum ObjectManager {
    static let interface = CDBUS_INTERFACE_OBJECT_MANAGER
}
