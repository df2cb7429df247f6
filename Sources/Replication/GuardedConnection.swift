import Glibc
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import PostgresNIO

/// A connection to PostgreSQL whose transport systole makes itself: the TCP connection, PostgreSQL's TLS request
/// and the TLS handshake, then ``ServerMessageGuard`` in front of postgres-nio, which speaks the protocol over it.
/// One connection, no pool: whoever holds it closes it after any error and makes a new one.
enum GuardedConnection {
    /// What a connection needs.
    struct Endpoint: Sendable {
        var host: String
        var port: Int
        var username: String
        var password: String?
        var database: String
        var tls: TLSConfiguration?
        var limits: ServerMessageLimits
    }

    /// How long the TCP connection, TLS and authentication may take together.
    static let connectTimeout: TimeAmount = .seconds(10)

    /// Connects, or throws why not: the guard's refusal when it refused the server, else the connection's error.
    static func connect(_ endpoint: Endpoint, id: Int, logger: Logger) async throws -> PostgresConnection {
        let refusal = Refusal()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .connect(host: endpoint.host, port: endpoint.port)
            .get()
        // A server that stops answering part-way (at the TLS request, during the handshake or authentication) is
        // closed on when the time is up; the refusal says why.
        let watchdog = channel.eventLoop.scheduleTask(in: connectTimeout) {
            refusal.record(
                ServerRefused(
                    description: "no answer within \(connectTimeout.nanoseconds / 1_000_000_000) s (is it PostgreSQL, "
                        + "and is it running? check the address's host and port)"
                )
            )
            channel.close(promise: nil)
        }
        defer { watchdog.cancel() }
        do {
            if let tls = endpoint.tls {
                let context = try NIOSSLContext(configuration: tls)
                let serverName = isIPAddress(endpoint.host) ? nil : endpoint.host
                try await channel.eventLoop.flatSubmit {
                    let answered = channel.eventLoop.makePromise(of: Void.self)
                    do {
                        let tlsHandler = try NIOSSLClientHandler(context: context, serverHostname: serverName)
                        try channel.pipeline.syncOperations.addHandler(
                            TLSRequestHandler(then: tlsHandler, answered: answered)
                        )
                    } catch {
                        answered.fail(error)
                    }
                    return answered.futureResult
                }.get()
            }
            let limits = endpoint.limits
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(ServerMessageGuard(limits: limits, refusal: refusal))
            }.get()
            var configuration = PostgresConnection.Configuration(
                establishedChannel: channel,
                tls: .disable,
                username: endpoint.username,
                password: endpoint.password,
                database: endpoint.database
            )
            // postgres-nio's own deadline comes after the watchdog's, which says why.
            configuration.options.connectTimeout = connectTimeout + .seconds(5)
            return try await PostgresConnection.connect(
                on: channel.eventLoop,
                configuration: configuration,
                id: id,
                logger: logger
            ).get()
        } catch {
            channel.close(promise: nil)
            throw refusal.value ?? error
        }
    }

    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}

/// Waits behind the TLS handler for its handshake: done when it completes, failed with its error (an untrusted
/// certificate, a wrong host name) or when the connection closes first.
final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let done: EventLoopPromise<Void>
    private var finished = false

    init(done: EventLoopPromise<Void>) {
        self.done = done
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent, !finished {
            finished = true
            done.succeed()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !finished {
            finished = true
            done.fail(error)
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !finished {
            finished = true
            done.fail(ServerRefused(description: "the server closed the connection during the TLS handshake"))
        }
        context.fireChannelInactive()
    }
}

/// PostgreSQL's TLS request: a special start-up message, answered by one byte, `S` (TLS follows) or `N`. On `S`
/// the TLS handler takes this one's place. A server that sends more than the byte is refused: those bytes would
/// come from outside TLS yet be read as if inside it (CVE-2021-23222).
final class TLSRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private static let requestCode: Int32 = 80_877_103
    private let tlsHandler: NIOSSLClientHandler
    private let answered: EventLoopPromise<Void>
    private var done = false

    init(then tlsHandler: NIOSSLClientHandler, answered: EventLoopPromise<Void>) {
        self.tlsHandler = tlsHandler
        self.answered = answered
    }

    func handlerAdded(context: ChannelHandlerContext) {
        var request = context.channel.allocator.buffer(capacity: 8)
        request.writeInteger(Int32(8))
        request.writeInteger(Self.requestCode)
        context.writeAndFlush(NIOAny(request), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        done = true
        let buffer = unwrapInboundIn(data)
        guard buffer.readableBytes == 1, let answer = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else {
            return fail("the server answered the TLS request with \(buffer.readableBytes) bytes, not one", context)
        }
        switch answer {
        case UInt8(ascii: "S"):
            do {
                // The handshake is waited for here: postgres-nio is handed a channel that is open and encrypted.
                let waiter = TLSHandshakeWaiter(done: answered)
                try context.pipeline.syncOperations.addHandler(waiter, position: .after(self))
                try context.pipeline.syncOperations.addHandler(tlsHandler, position: .after(self))
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            } catch {
                fail("TLS could not start: \(error)", context)
            }
        case UInt8(ascii: "N"):
            fail(
                "the server does not offer TLS, which the address's sslmode requires: turn ssl on in its "
                    + "postgresql.conf, or use sslmode=disable if it is on this machine",
                context
            )
        default:
            fail("the server answered the TLS request with something other than PostgreSQL's answer", context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            answered.fail(ServerRefused(description: "the server closed the connection at the TLS request"))
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            answered.fail(error)
        }
        context.fireErrorCaught(error)
    }

    private func fail(_ reason: String, _ context: ChannelHandlerContext) {
        answered.fail(ServerRefused(description: reason))
        context.close(promise: nil)
    }
}
