import CDBus
import Glibc

/// Owns one reference to a libdbus message. Messages are built and read on any thread but never shared between
/// threads while in use; the connection's loop thread only sends them.
final class Message: @unchecked Sendable {
    let raw: OpaquePointer

    /// Takes over a reference the caller already holds.
    init(taking raw: OpaquePointer) {
        self.raw = raw
    }

    /// Adds a reference (for a message libdbus lends to a callback).
    init(retaining raw: OpaquePointer) {
        self.raw = dbus_message_ref(raw)
    }

    deinit { dbus_message_unref(raw) }

    /// Whether the message's arguments include a file descriptor (`h`), anywhere in its signature.
    var carriesFileDescriptors: Bool {
        guard let signature = dbus_message_get_signature(raw) else { return false }
        return strchr(signature, Int32(UInt8(ascii: "h"))) != nil
    }

    static func methodCall(
        destination: String?,
        path: String,
        interface: String?,
        member: String
    ) throws(DBusError) -> Message {
        try Validate.objectPath(path)
        try Validate.member(member)
        if let interface { try Validate.interface(interface) }
        if let destination { try Validate.busName(destination) }
        guard let raw = dbus_message_new_method_call(destination, path, interface, member) else {
            throw DBusError(.noMemory, "out of memory creating a method call")
        }
        return Message(taking: raw)
    }

    static func signal(path: String, interface: String, member: String) throws(DBusError) -> Message {
        try Validate.objectPath(path)
        try Validate.interface(interface)
        try Validate.member(member)
        guard let raw = dbus_message_new_signal(path, interface, member) else {
            throw DBusError(.noMemory, "out of memory creating a signal")
        }
        return Message(taking: raw)
    }

    func methodReturn() throws(DBusError) -> Message {
        guard let reply = dbus_message_new_method_return(raw) else {
            throw DBusError(.noMemory, "out of memory creating a reply")
        }
        return Message(taking: reply)
    }

    func errorReply(_ error: DBusError) -> Message? {
        // An error name that is not a valid D-Bus name would make libdbus abort; fall back to Failed.
        let name = (try? Validate.errorName(error.name)) != nil ? error.name : DBusError.Name.failed.rawValue
        return dbus_message_new_error(raw, name, error.message).map(Message.init(taking:))
    }

    var type: Int32 { dbus_message_get_type(raw) }
    var serial: UInt32 { dbus_message_get_serial(raw) }
    var replySerial: UInt32 { dbus_message_get_reply_serial(raw) }
    var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
    var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    var errorName: String? { dbus_message_get_error_name(raw).map { String(cString: $0) } }
    var noReplyExpected: Bool { dbus_message_get_no_reply(raw) != 0 }

    /// Appends arguments in order.
    func append(_ arguments: [DBusValue]) throws(DBusError) {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iterator)
        for argument in arguments {
            try MessageWriter.append(argument, to: &iterator)
        }
    }

    /// Reads every argument.
    func arguments() throws(DBusError) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iterator) != 0 else { return [] }
        return try MessageReader.readAll(&iterator)
    }

    /// The error this message carries, when it is an ERROR reply.
    func asError() -> DBusError {
        let first = (try? arguments())?.first?.string ?? ""
        return DBusError(name: errorName ?? DBusError.Name.failed.rawValue, message: first)
    }
}

/// Message type codes (libdbus defines them as plain integers, which Swift imports, but naming them here keeps
/// call sites readable).
enum MessageType {
    static let methodCall = DBUS_MESSAGE_TYPE_METHOD_CALL
    static let methodReturn = DBUS_MESSAGE_TYPE_METHOD_RETURN
    static let error = DBUS_MESSAGE_TYPE_ERROR
    static let signal = DBUS_MESSAGE_TYPE_SIGNAL
}
