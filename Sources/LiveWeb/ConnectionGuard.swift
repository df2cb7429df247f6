import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

/// How many connections each client address has open, shared by the server's connections.
final class ClientConnections: Sendable {
    private let open = Mutex([String: Int]())

    /// Counts a connection from `client`; false (and not counted) when it already has `limit`.
    func admit(_ client: String, limit: Int) -> Bool {
        open.withLock { table in
            guard table[client, default: 0] < limit else { return false }
            table[client, default: 0] += 1
            return true
        }
    }

    func release(_ client: String) {
        open.withLock { table in
            let left = table[client, default: 1] - 1
            table[client] = left > 0 ? left : nil
        }
    }
}

/// The web server's limits on one connection, in front of Hummingbird's request handling: a client address has at
/// most ``LiveWebServer/connectionsPerClient`` connections; a request's head must arrive within
/// ``LiveWebServer/headTimeout`` of the connection opening or the previous response ending, and the whole request
/// (its body) within ``LiveWebServer/requestTimeout`` of its head; a response marked `Connection: close` (a 401, a
/// 503) closes the connection once it is written. Hummingbird's idle timeout alone let a client that sends a byte
/// now and then (or a body nobody reads after a 401) hold a connection for ever.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let clients: ClientConnections
    private var client: String?
    private var deadline: Scheduled<Void>?
    private var closeAfterResponse = false
    /// Requests whose head arrived and whose response has not ended.
    private var inFlight = 0

    init(clients: ClientConnections) {
        self.clients = clients
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        guard clients.admit(address, limit: LiveWebServer.connectionsPerClient) else {
            context.close(promise: nil)
            return
        }
        client = address
        expect(within: LiveWebServer.headTimeout, context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        if let client { clients.release(client) }
        client = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            inFlight += 1
            expect(within: LiveWebServer.requestTimeout, context)
        case .end:
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            closeAfterResponse = response.headerFields[.connection]?.lowercased() == "close"
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            inFlight = max(0, inFlight - 1)
            let written = promise ?? context.eventLoop.makePromise()
            context.write(data, promise: written)
            if closeAfterResponse {
                let channel = context.channel
                written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            } else if inFlight == 0 {
                expect(within: LiveWebServer.headTimeout, context)
            }
        }
    }

    /// Closes the connection unless the next step (a head, the request's end) comes within `limit`.
    private func expect(within limit: TimeAmount, _ context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
    }
}
