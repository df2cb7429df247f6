import Glibc
import SafeText
import Synchronization

/// An object exported on a connection: interfaces with methods, and property values it keeps.
///
/// Every object answers `org.freedesktop.DBus.Properties` (Get, GetAll, Set, and the PropertiesChanged signal)
/// and `org.freedesktop.DBus.Introspectable` for the interfaces it has. Properties without a value (nil) are
/// absent: left out of GetAll and announced as invalidated when they disappear, as BlueZ does with RSSI.
public final class DBusObject: Sendable {
    /// The object path.
    public let path: String

    private struct Exported {
        var interface: DBusInterface
        var values: [String: DBusValue]
        /// Properties whose value is made when it is read (``provideProperty(_:_:value:)``).
        var providers: [String: @Sendable () -> DBusValue?] = [:]

        /// Every value, the provided ones made now: call without the object's lock held.
        func currentValues() -> [String: DBusValue] {
            var current = values
            for (name, provide) in providers { current[name] = provide() }
            return current
        }

        /// The readable values, the provided ones made now: call without the object's lock held.
        func readableValues() -> [String: DBusValue] {
            currentValues().filter { name, _ in interface.properties.first { $0.name == name }?.access != .write }
        }

        /// The value of `name`, made now when it is provided: call without the object's lock held.
        func value(of name: String) -> DBusValue? {
            if let provide = providers[name] { return provide() }
            return values[name]
        }
    }

    private struct State {
        var interfaces: [String: Exported] = [:]
        var order: [String] = []
        var connection: WeakConnection?
    }
    private let state = Mutex(State())

    public init(path: String) {
        self.path = path
    }

    // MARK: Interfaces

    /// Adds (or replaces) an interface with initial property values. Announced with `InterfacesAdded` when the
    /// object is exported under an object manager.
    public func addInterface(_ interface: DBusInterface, values: [String: DBusValue] = [:]) {
        let connection = state.withLock { state -> DBusConnection? in
            if state.interfaces[interface.name] == nil { state.order.append(interface.name) }
            state.interfaces[interface.name] = Exported(interface: interface, values: values)
            return state.connection?.connection
        }
        guard let connection else { return }
        let path = path
        let properties = values
        connection.loop.enqueue { [state = connection.state] in
            guard let manager = state.manager(for: path) else { return }
            state.emitInterfacesAdded(manager: manager, path: path, interfaces: [interface.name: properties])
        }
    }

    /// Removes an interface, announced with `InterfacesRemoved`.
    public func removeInterface(_ name: String) {
        let connection = state.withLock { state -> DBusConnection? in
            guard state.interfaces.removeValue(forKey: name) != nil else { return nil }
            state.order.removeAll { $0 == name }
            return state.connection?.connection
        }
        guard let connection else { return }
        let path = path
        connection.loop.enqueue { [state = connection.state] in
            guard let manager = state.manager(for: path) else { return }
            state.emitInterfacesRemoved(manager: manager, path: path, names: [name])
        }
    }

    /// Whether the object has the interface.
    public func hasInterface(_ name: String) -> Bool {
        state.withLock { $0.interfaces[name] != nil }
    }

    // MARK: Properties

    /// The current value of a property, nil when absent.
    public func property(_ interface: String, _ name: String) -> DBusValue? {
        state.withLock { $0.interfaces[interface] }?.value(of: name)
    }

    /// Makes a property's value when it is read (Get, GetAll, GetManagedObjects) instead of keeping one: for a
    /// large value that changes more often than anybody reads it. Its changes are announced by
    /// ``setProperties(_:_:emitUnchanged:announce:invalidating:)``: the value itself, or only its name, as
    /// invalidated (a client that wants the new value reads it). `value` runs without the object's lock held, on
    /// whichever thread reads the property (the loop thread included), so it must not wait.
    public func provideProperty(
        _ interface: String,
        _ name: String,
        value: @escaping @Sendable () -> DBusValue?
    ) {
        state.withLock { $0.interfaces[interface]?.providers[name] = value }
    }

    /// Sets (or, with nil, removes) property values and emits one `PropertiesChanged` with those that changed.
    ///
    /// - Parameters:
    ///   - emitUnchanged: announce the values even when equal to the old ones, as BlueZ does for a
    ///     characteristic's `Value` on every notification.
    ///   - announce: false changes the values without a signal (to play a service that misses one).
    ///   - invalidating: properties announced as changed without their values (listed among the invalidated), in
    ///     the same signal: a provided property whose value is large (``provideProperty(_:_:value:)``).
    public func setProperties(
        _ interface: String,
        _ changes: [String: DBusValue?],
        emitUnchanged: Bool = false,
        announce: Bool = true,
        invalidating: [String] = []
    ) {
        let emission = state.withLock { state -> (DBusConnection, [String: DBusValue], [String])? in
            guard var exported = state.interfaces[interface] else { return nil }
            var changed: [String: DBusValue] = [:]
            var invalidated: [String] = []
            for (name, value) in changes {
                let old = exported.values[name]
                guard emitUnchanged || old != value else { continue }
                exported.values[name] = value
                if let value { changed[name] = value } else { invalidated.append(name) }
            }
            invalidated += invalidating.filter { changed[$0] == nil && !invalidated.contains($0) }
            state.interfaces[interface] = exported
            guard announce, !changed.isEmpty || !invalidated.isEmpty, let connection = state.connection?.connection
            else {
                return nil
            }
            return (connection, changed, invalidated.sorted())
        }
        guard let (connection, changed, invalidated) = emission else { return }
        try? connection.emit(
            path: path,
            interface: Properties.interface,
            member: "PropertiesChanged",
            arguments: [.string(interface), .propertyMap(changed), .strings(invalidated)]
        )
    }

    /// Sets one property (nil removes it); emits `PropertiesChanged` if it changed.
    public func setProperty(_ interface: String, _ name: String, _ value: DBusValue?) {
        setProperties(interface, [name: value])
    }

    /// Emits a signal from this object (nothing happens while it is not exported).
    public func emit(_ interface: String, _ member: String, _ arguments: [DBusValue] = []) {
        guard let connection = state.withLock({ $0.connection?.connection }) else { return }
        try? connection.emit(path: path, interface: interface, member: member, arguments: arguments)
    }

    // MARK: Used by the connection

    func attach(to connection: DBusConnection) {
        state.withLock { $0.connection = WeakConnection(connection) }
    }

    func detach() {
        state.withLock { $0.connection = nil }
    }

    func interfaceNames() -> [String] {
        state.withLock { $0.order }
    }

    func interfaceDescriptions() -> [DBusInterface] {
        state.withLock { state in state.order.compactMap { state.interfaces[$0]?.interface } }
    }

    /// Interfaces with the properties that currently have values, including the standard interfaces (with no
    /// properties), as `GetManagedObjects` and `InterfacesAdded` list them. Properties is listed only for an
    /// object that has some, as GDBus-based services such as bluetoothd do.
    func interfacesAndProperties() -> [String: [String: DBusValue]] {
        var (result, provided) = state.withLock { state -> ([String: [String: DBusValue]], [String: Exported]) in
            guard !state.interfaces.isEmpty else { return ([:], [:]) }
            var result: [String: [String: DBusValue]] = [Introspection.interface: [:]]
            if state.interfaces.values.contains(where: { !$0.interface.properties.isEmpty }) {
                result[Properties.interface] = [:]
            }
            for (name, exported) in state.interfaces where exported.providers.isEmpty { result[name] = exported.values }
            return (result, state.interfaces.filter { !$0.value.providers.isEmpty })
        }
        for (name, exported) in provided { result[name] = exported.currentValues() }
        return result
    }

    /// Whether a call of `member` may carry file descriptors: its method names one among its inputs. A call that
    /// carries one otherwise is refused before its arguments are read, so no descriptor is opened for nobody.
    func takesFileDescriptors(interface: String?, member: String) -> Bool {
        method(interface: interface, member: member)?.inputs.contains { $0.type.signature.contains("h") } ?? false
    }

    private func method(interface: String?, member: String) -> DBusMethod? {
        state.withLock { state -> DBusMethod? in
            if let interface {
                return state.interfaces[interface]?.interface.methods.first { $0.name == member }
            }
            for name in state.order {
                if let method = state.interfaces[name]?.interface.methods.first(where: { $0.name == member }) {
                    return method
                }
            }
            return nil
        }
    }

    func handle(_ call: DBusMethodCall) async -> Result<[DBusValue], DBusError> {
        do {
            if call.interface == Properties.interface {
                return .success(try await handleProperties(call))
            }
            let method = method(interface: call.interface, member: call.member)
            guard let method else {
                if let interface = call.interface, !hasInterface(interface) {
                    throw DBusError(.unknownInterface, "\(path) has no interface \(interface)")
                }
                throw DBusError(
                    .unknownMethod,
                    "no method \(call.member) in \(call.interface ?? "any interface") at \(path)"
                )
            }
            let expected = method.inputs.map(\.type.signature).joined()
            let given = call.arguments.map(\.type.signature).joined()
            guard expected == given else {
                for fd in call.arguments.flatMap(\.unixFDs) { close(fd) }
                throw DBusError(.invalidArgs, "\(call.member) takes '\(expected)', got '\(given)'")
            }
            return .success(try await method.handler(call))
        } catch let error as DBusError {
            return .failure(error)
        } catch {
            return .failure(DBusError(.failed, "\(error)"))
        }
    }

    private func handleProperties(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let interfaceName = try call.argument(0, "an interface name").string ?? ""
        guard let exported = state.withLock({ $0.interfaces[interfaceName] }) else {
            throw DBusError(.unknownInterface, "\(path) has no interface \(interfaceName.quotedExcerpt())")
        }
        switch call.member {
        case "GetAll":
            return [.propertyMap(exported.readableValues())]
        case "Get":
            let name = try call.argument(1, "a property name").string ?? ""
            guard let property = exported.interface.properties.first(where: { $0.name == name }),
                property.access != .write
            else {
                throw DBusError(.unknownProperty, "\(interfaceName) has no readable property \(name.quotedExcerpt())")
            }
            guard let value = exported.value(of: name) else {
                throw DBusError(.unknownProperty, "\(interfaceName).\(name) has no value")
            }
            return [.variant(value)]
        case "Set":
            let name = try call.argument(1, "a property name").string ?? ""
            guard case .variant(let value) = try call.argument(2, "a variant value") else {
                throw DBusError(.invalidArgs, "Set takes the value as a variant")
            }
            guard let property = exported.interface.properties.first(where: { $0.name == name }) else {
                throw DBusError(.unknownProperty, "\(interfaceName) has no property \(name.quotedExcerpt())")
            }
            guard property.access != .read else {
                throw DBusError(.propertyReadOnly, "\(interfaceName).\(name) is read-only")
            }
            guard value.type == property.type else {
                throw DBusError(.invalidArgs, "\(interfaceName).\(name) is '\(property.type)', got '\(value.type)'")
            }
            try await property.willSet?(value)
            setProperty(interfaceName, name, value)
            return []
        default:
            throw DBusError(.unknownMethod, "no method \(call.member) in \(Properties.interface)")
        }
    }
}

enum Properties {
    static let interface = "org.freedesktop.DBus.Properties"
}
