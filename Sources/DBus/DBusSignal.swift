/// A signal received from the bus.
public struct DBusSignal: Sendable, Hashable {
    /// Unique name of the sender (`:1.42`).
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]

    public init(sender: String, path: String, interface: String, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// Which signals a subscription receives. Every field left nil matches anything.
///
/// The rule is both sent to the bus (`AddMatch`, so the bus routes only these signals to us) and checked
/// locally (so two subscriptions on one connection do not see each other's signals).
public struct DBusMatchRule: Sendable, Hashable, CustomStringConvertible {
    /// A unique or well-known bus name.
    public var sender: String?
    /// Exactly this object path.
    public var path: String?
    /// This object path or any below it.
    public var pathNamespace: String?
    public var interface: String?
    public var member: String?
    /// The first argument, when it is a string, must equal this.
    public var arg0: String?

    public init(
        sender: String? = nil,
        path: String? = nil,
        pathNamespace: String? = nil,
        interface: String? = nil,
        member: String? = nil,
        arg0: String? = nil
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule in the bus's match-rule syntax.
    public var description: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            parts.append("\(key)='\(value.replacingQuotes())'")
        }
        add("sender", sender)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("interface", interface)
        add("member", member)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    /// Whether `signal` matches, given the current unique owner of `sender` when it is a well-known name
    /// (nil when unknown: then the bus's own routing is trusted for the sender).
    func matches(_ signal: DBusSignal, senderOwner: String?) -> Bool {
        if let sender {
            if sender.hasPrefix(":") {
                guard signal.sender == sender else { return false }
            } else if sender == "org.freedesktop.DBus" {
                guard signal.sender == sender else { return false }
            } else if let senderOwner, signal.sender != senderOwner {
                return false
            }
        }
        if let path, signal.path != path { return false }
        if let pathNamespace,
            !(signal.path == pathNamespace
                || signal.path.hasPrefix(pathNamespace == "/" ? "/" : pathNamespace + "/"))
        {
            return false
        }
        if let interface, signal.interface != interface { return false }
        if let member, signal.member != member { return false }
        if let arg0, signal.arguments.first?.string != arg0 { return false }
        return true
    }
}

extension String {
    /// Match rules quote values with '; a ' inside is written as '\'' (close, escaped quote, reopen).
    fileprivate func replacingQuotes() -> String {
        var result = ""
        for character in self {
            if character == "'" { result += "'\\''" } else { result.append(character) }
        }
        return result
    }
}
