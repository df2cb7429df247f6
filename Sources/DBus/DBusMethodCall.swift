/// A method call received by an exported object.
public struct DBusMethodCall: Sendable {
    /// Unique name of the caller.
    public var sender: String
    public var path: String
    /// The interface the caller named (callers may omit it).
    public var interface: String?
    public var member: String
    public var arguments: [DBusValue]

    public init(sender: String, path: String, interface: String?, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }

    /// Argument `index`, or an `InvalidArgs` error naming what was expected.
    public func argument(_ index: Int, _ expected: String) throws(DBusError) -> DBusValue {
        guard index < arguments.count else {
            throw DBusError(.invalidArgs, "\(member) expects \(expected) as argument \(index + 1)")
        }
        return arguments[index]
    }
}

/// Handles a method call; returns the reply's arguments or throws the error to reply with.
public typealias DBusMethodHandler = @Sendable (DBusMethodCall) async throws(DBusError) -> [DBusValue]

/// One method of an exported interface.
public struct DBusMethod: Sendable {
    public var name: String
    /// Named input arguments, for introspection and for checking the call's signature.
    public var inputs: [(name: String, type: DBusType)]
    public var outputs: [(name: String, type: DBusType)]
    public var handler: DBusMethodHandler

    public init(
        _ name: String,
        inputs: [(name: String, type: DBusType)] = [],
        outputs: [(name: String, type: DBusType)] = [],
        handler: @escaping DBusMethodHandler
    ) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.handler = handler
    }
}

/// One property of an exported interface.
public struct DBusProperty: Sendable {
    public enum Access: String, Sendable {
        case read
        case write
        case readwrite
    }

    public var name: String
    public var type: DBusType
    public var access: Access
    /// Called for `Set` on a writable property before the value is stored; throw to refuse it. Returning
    /// normally stores the value and emits `PropertiesChanged`.
    public var willSet: (@Sendable (DBusValue) async throws(DBusError) -> Void)?

    public init(
        _ name: String,
        _ type: DBusType,
        access: Access = .read,
        willSet: (@Sendable (DBusValue) async throws(DBusError) -> Void)? = nil
    ) {
        self.name = name
        self.type = type
        self.access = access
        self.willSet = willSet
    }
}

/// A signal an interface declares (for introspection).
public struct DBusSignalDescription: Sendable {
    public var name: String
    public var arguments: [(name: String, type: DBusType)]

    public init(_ name: String, arguments: [(name: String, type: DBusType)] = []) {
        self.name = name
        self.arguments = arguments
    }
}

/// An interface to export: its methods, properties and signals.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    public var signals: [DBusSignalDescription]

    public init(
        _ name: String,
        methods: [DBusMethod] = [],
        properties: [DBusProperty] = [],
        signals: [DBusSignalDescription] = []
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}
