import Foundation
import Glibc
import Synchronization

/// A server on loopback that speaks just enough of PostgreSQL's protocol to do what a real one will not: the
/// hostile or impersonating server a receiver or `systole --database` may reach (anyone who binds the port while
/// PostgreSQL is down, anyone on the path without verified TLS). Each connection gets ``Behaviour``; the server
/// records what the client sent and how much it managed to send.
public final class HostilePostgres: Sendable {
    public enum Behaviour: Sendable {
        /// Answers the start-up with an error message claiming `length` bytes, and sends bytes until the client
        /// closes.
        case hugeError(length: UInt32)
        /// Asks for the password in clear text.
        case cleartextPassword
        /// Asks for an MD5 password.
        case md5Password
        /// Lets the client in without any authentication.
        case trust
        /// Offers SCRAM-SHA-256, then says "authentication ok" without finishing it.
        case scramWithoutProof
        /// Answers PostgreSQL's TLS request with its `S` and, in the same packet, bytes outside TLS.
        case tlsWithInjectedBytes
        /// Accepts the connection and never says anything.
        case silent
    }

    public var port: Int { listener.port }
    private let listener: LoopbackListener
    private let behaviour: Behaviour
    private let state = Mutex(Recorded())

    /// What clients did.
    public struct Recorded: Sendable {
        /// Connections accepted.
        public var connections = 0
        /// Password messages received (`p`): what a client gave away.
        public var passwords: [[UInt8]] = []
        /// The most bytes sent on one connection before the client closed it.
        public var mostBytesSent = 0
    }

    public var recorded: Recorded { state.withLock { $0 } }

    public init(_ behaviour: Behaviour) throws {
        self.behaviour = behaviour
        listener = try LoopbackListener()
        listener.serve { [self] client in
            state.withLock { $0.connections += 1 }
            serve(client)
        }
    }

    /// Stops accepting (connections already served end when their client closes).
    public func stop() {
        listener.stop()
    }

    private func serve(_ client: Int32) {
        // The TLS request (8 bytes: length 8 and the code) or the start-up message.
        guard var message = readStartup(client) else { return }
        if message.count == 4, message == [0x04, 0xD2, 0x16, 0x2F] {
            if case .tlsWithInjectedBytes = behaviour {
                // S, then an "authentication ok" and "ready for query" outside TLS.
                _ = LoopbackListener.send(
                    client,
                    [UInt8(ascii: "S")] + auth(0) + [UInt8(ascii: "Z"), 0, 0, 0, 5, UInt8(ascii: "I")]
                )
                drain(client)
                return
            }
            _ = LoopbackListener.send(client, [UInt8(ascii: "N")])
            guard let startup = readStartup(client) else { return }
            message = startup
        }
        switch behaviour {
        case .hugeError(let length):
            var header: [UInt8] = [UInt8(ascii: "E")]
            header += bigEndian(length)
            var sent = LoopbackListener.send(client, header)
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 16)
            while sent < Int(length) {
                let wrote = LoopbackListener.send(client, chunk)
                guard wrote > 0 else { break }
                sent += wrote
                state.withLock { $0.mostBytesSent = max($0.mostBytesSent, sent) }
            }
        case .cleartextPassword:
            _ = LoopbackListener.send(client, auth(3))
            recordPassword(client)
        case .md5Password:
            _ = LoopbackListener.send(client, [UInt8(ascii: "R")] + bigEndian(12) + bigEndian(5) + [1, 2, 3, 4])
            recordPassword(client)
        case .trust:
            _ = LoopbackListener.send(client, auth(0) + [UInt8(ascii: "Z"), 0, 0, 0, 5, UInt8(ascii: "I")])
            drain(client)
        case .scramWithoutProof:
            let mechanism = Array("SCRAM-SHA-256".utf8) + [0, 0]
            _ = LoopbackListener.send(
                client,
                [UInt8(ascii: "R")] + bigEndian(UInt32(8 + mechanism.count)) + bigEndian(10) + mechanism
            )
            recordPassword(client)
            _ = LoopbackListener.send(client, auth(0) + [UInt8(ascii: "Z"), 0, 0, 0, 5, UInt8(ascii: "I")])
            drain(client)
        case .tlsWithInjectedBytes, .silent:
            drain(client)
        }
    }

    private func auth(_ code: UInt32) -> [UInt8] {
        [UInt8(ascii: "R")] + bigEndian(8) + bigEndian(code)
    }

    private func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// A start-up message's body (after its length), or nil when the client closed.
    private func readStartup(_ client: Int32) -> [UInt8]? {
        guard let length = LoopbackListener.read(client, 4) else { return nil }
        let total = Int(length[0]) << 24 | Int(length[1]) << 16 | Int(length[2]) << 8 | Int(length[3])
        guard (8...10_000).contains(total) else { return nil }
        return LoopbackListener.read(client, total - 4)
    }

    /// The next typed message (`p`: a password or SASL response) kept as a password given away.
    private func recordPassword(_ client: Int32) {
        guard let header = LoopbackListener.read(client, 5) else { return }
        let length = Int(header[1]) << 24 | Int(header[2]) << 16 | Int(header[3]) << 8 | Int(header[4])
        guard (4...10_000).contains(length), let body = LoopbackListener.read(client, length - 4) else { return }
        if header[0] == UInt8(ascii: "p") { state.withLock { $0.passwords.append(body) } }
    }

    private func drain(_ client: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while buffer.withUnsafeMutableBytes({ recv(client, $0.baseAddress, $0.count, 0) }) > 0 {}
    }
}
