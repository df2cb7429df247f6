import Foundation
import Glibc
import Synchronization

/// A server on loopback that speaks just enough MQTT to do what a real broker will not: it accepts a client's
/// CONNECT and, once told to ``attack()``, sends a PUBLISH announcing the largest length MQTT can say (256 MiB) and
/// streams its bytes until the client closes. systoled never subscribes, so no honest broker sends it a message.
public final class HostileBroker: Sendable {
    public var port: Int { listener.port }
    private let listener: LoopbackListener
    private let state = Mutex(State())

    /// What clients did.
    public struct Recorded: Sendable {
        /// CONNECT packets received (each client process's connection).
        public var connects = 0
        /// The most bytes of the huge message sent on one connection before the client closed it.
        public var mostBytesSent = 0
        /// CONNECT packets received since ``attack()``.
        public var attacked = 0
    }

    private struct State: Sendable {
        var recorded = Recorded()
        var hostile = false
        /// Connections accepted before the attack, which it ends so that the client connects again.
        var quiet: Set<Int32> = []
    }

    public var recorded: Recorded { state.withLock { $0.recorded } }

    /// From now on every connection gets the huge message; the quiet ones end.
    public func attack() {
        state.withLock { state in
            state.hostile = true
            for client in state.quiet { shutdown(client, Int32(SHUT_RDWR)) }
        }
    }

    public init() throws {
        listener = try LoopbackListener()
        listener.serve { [self] client in serve(client) }
    }

    public func stop() {
        listener.stop()
    }

    private func serve(_ client: Int32) {
        // CONNECT: its type, then its remaining length (at most 4 bytes of 7 bits each), then that many bytes.
        guard let type = LoopbackListener.read(client, 1), type[0] >> 4 == 1, let length = remainingLength(client),
            length < 65_536, LoopbackListener.read(client, length) != nil
        else { return }
        let hostile = state.withLock { state in
            state.recorded.connects += 1
            if state.hostile { state.recorded.attacked += 1 } else { state.quiet.insert(client) }
            return state.hostile
        }
        guard hostile else {
            // CONNACK (accepted), then whatever the client sends until it or the attack ends the connection.
            _ = LoopbackListener.send(client, [0x20, 0x02, 0x00, 0x00])
            var buffer = [UInt8](repeating: 0, count: 4096)
            while buffer.withUnsafeMutableBytes({ recv(client, $0.baseAddress, $0.count, 0) }) > 0 {}
            _ = state.withLock { $0.quiet.remove(client) }
            return
        }
        // CONNACK, then a PUBLISH (QoS 0) of 268 435 455 bytes: a topic "x", and the rest payload.
        var sent = LoopbackListener.send(
            client,
            [0x20, 0x02, 0x00, 0x00, 0x30, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x01, UInt8(ascii: "x")]
        )
        let chunk = [UInt8](repeating: UInt8(ascii: "y"), count: 1 << 16)
        while sent < 0x0FFF_FFFF {
            let wrote = LoopbackListener.send(client, chunk)
            guard wrote > 0 else { break }
            sent += wrote
            state.withLock { $0.recorded.mostBytesSent = max($0.recorded.mostBytesSent, sent) }
        }
    }

    private func remainingLength(_ client: Int32) -> Int? {
        var value = 0
        for shift in stride(from: 0, to: 28, by: 7) {
            guard let byte = LoopbackListener.read(client, 1)?[0] else { return nil }
            value |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }
}
