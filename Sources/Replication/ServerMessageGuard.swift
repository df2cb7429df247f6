import NIOCore
import Synchronization

/// Which ways of proving the password a PostgreSQL server may ask for (libpq's `require_auth`). A server may be
/// hostile or an impostor (anyone who binds the port while PostgreSQL is down, anyone on the path without
/// verified TLS), so by default only SCRAM-SHA-256 is accepted: the password never leaves this machine, and the
/// server proves that it knows the password's verifier before anything is sent.
public struct PostgresAuthentication: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// SCRAM-SHA-256 (the default): a proof of the password, and of the server's knowledge of it.
    public static let scram = PostgresAuthentication(rawValue: 1)
    /// MD5: a hash an eavesdropper or an impostor can replay against servers that take MD5.
    public static let md5 = PostgresAuthentication(rawValue: 2)
    /// The password itself, in clear text: only with `sslmode=verify-full`.
    public static let password = PostgresAuthentication(rawValue: 4)
    /// No authentication at all (`trust`): then nothing proves the server is the right one.
    public static let none = PostgresAuthentication(rawValue: 8)

    /// The names `require_auth` takes, in order.
    public static let names: [(String, PostgresAuthentication)] = [
        ("scram-sha-256", .scram), ("md5", .md5), ("password", .password), ("none", .none),
    ]
}

/// What a connection accepts from the server.
struct ServerMessageLimits: Sendable {
    /// The largest message, in bytes (PostgreSQL's own messages to a client are small; a row is as large as its
    /// values).
    var largestMessage: Int
    /// The most bytes over the whole connection, or nil for no bound (a long-lived connection).
    var total: Int?
    var authentication: PostgresAuthentication
}

/// Why a connection was closed on the server's account, for the log and `systole status`.
struct ServerRefused: Error, CustomStringConvertible {
    var description: String
}

/// Set by the guard when it refuses the server, read by whoever made the connection.
final class Refusal: Sendable {
    private let reason = Mutex<ServerRefused?>(nil)
    var value: ServerRefused? { reason.withLock { $0 } }
    func record(_ refusal: ServerRefused) { reason.withLock { $0 = $0 ?? refusal } }
}

/// Sits in front of postgres-nio's decoder and reads only the frames of the server's messages (a type byte and a
/// length): a message longer than the limit, or over the connection's total, closes the connection before any of it
/// is buffered (postgres-nio would gather a message of any claimed length, up to 2 GiB), and so does an
/// authentication request the settings do not accept (a password in clear text or MD5 when only SCRAM is, an
/// "authentication ok" from a server that never proved itself). The bytes themselves pass on unchanged.
final class ServerMessageGuard: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let limits: ServerMessageLimits
    private let refusal: Refusal
    /// The frame being read: its type and length bytes, and for an authentication request its code's four.
    private var frame: [UInt8] = []
    /// Bytes of the current message's body still to pass.
    private var remaining = 0
    private var received = 0
    private var refused = false
    private var authentication = AuthenticationProgress()

    init(limits: ServerMessageLimits, refusal: Refusal) {
        self.limits = limits
        self.refusal = refusal
        frame.reserveCapacity(9)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        let buffer = unwrapInboundIn(data)
        received += buffer.readableBytes
        if let total = limits.total, received > total {
            return refuse("the server sent more than \(total / (1 << 20)) MiB on one connection", context)
        }
        if let problem = inspect(buffer.readableBytesView) { return refuse(problem, context) }
        context.fireChannelRead(data)
    }

    private func refuse(_ reason: String, _ context: ChannelHandlerContext) {
        refused = true
        let error = ServerRefused(description: reason)
        refusal.record(error)
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }

    /// Walks the frames in `bytes`; returns what is wrong, if anything.
    private func inspect(_ bytes: ByteBufferView) -> String? {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if remaining > 0 {
                let step = min(remaining, bytes.endIndex - index)
                remaining -= step
                index += step
                continue
            }
            frame.append(bytes[index])
            index += 1
            if let problem = frameRead() { return problem }
        }
        return nil
    }

    /// Looks at the frame once it is whole: 5 bytes, or 9 for an authentication request.
    private func frameRead() -> String? {
        let isAuthentication = frame[0] == UInt8(ascii: "R")
        guard frame.count == 5 || frame.count == 9 else { return nil }
        let length = frame[1...4].reduce(0) { $0 << 8 | Int($1) }
        if frame.count == 5 {
            guard length >= 4 else { return "the server sent a message whose length, \(length), is impossible" }
            guard length - 4 <= limits.largestMessage else {
                return "the server sent a message of \(length) bytes, over the \(limits.largestMessage / 1024) KiB "
                    + "accepted (a hostile server, or not PostgreSQL)"
            }
            if isAuthentication {
                guard length >= 8 else { return "the server sent an authentication request without its code" }
                return nil
            }
            remaining = length - 4
            frame.removeAll(keepingCapacity: true)
            return nil
        }
        let code = frame[5...8].reduce(0) { $0 << 8 | Int($1) }
        remaining = length - 8
        frame.removeAll(keepingCapacity: true)
        return authentication.check(code, accepting: limits.authentication)
    }
}

/// Which authentication the server asked for, so that "authentication ok" is accepted only after what the
/// settings require was done.
struct AuthenticationProgress {
    private var method: PostgresAuthentication?
    private var saslFinished = false

    /// Checks one authentication message (its code); returns what is wrong, if anything.
    mutating func check(_ code: Int, accepting accepted: PostgresAuthentication) -> String? {
        let hint = "(require_auth in the PostgreSQL address says which are accepted)"
        switch code {
        case 0:
            switch method {
            case nil:
                return accepted.contains(.none)
                    ? nil
                    : "the server let systole in without asking for a password: it did not prove it is the "
                        + "right server \(hint)"
            case .scram? where !saslFinished:
                return "the server ended SCRAM authentication without proving it knows the password"
            default:
                return nil
            }
        case 3:
            method = .password
            return accepted.contains(.password)
                ? nil : "the server asked for the password in clear text, which is not accepted \(hint)"
        case 5:
            method = .md5
            return accepted.contains(.md5) ? nil : "the server asked for an MD5 password, which is not accepted \(hint)"
        case 10:
            method = .scram
            return accepted.contains(.scram) ? nil : "the server asked for SCRAM, which is not accepted \(hint)"
        case 11, 12:
            guard method == .scram else { return "the server sent a SCRAM message out of turn" }
            if code == 12 { saslFinished = true }
            return nil
        default:
            return "the server asked for an authentication systole does not offer (code \(code))"
        }
    }
}
