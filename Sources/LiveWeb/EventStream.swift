import Foundation
import Hummingbird
import LiveFeed
import Logging
import NIOCore
import ServiceLifecycle

/// The live page's updates as server-sent events: a `status` event with the whole ``LiveStatus`` at once, then
/// after each change at most one a second, and a comment every 5 s without one, so proxies and browsers keep it
/// open and a stream whose client went away is noticed (its write fails) and leaves its place to another.
/// EventSource reconnects by itself after a restart of systoled.
enum EventStream {
    /// The shortest time between two events of one stream: the bpm moves once a second per sensor, and a
    /// hundred sensors must not make a page redraw hundreds of times a second (each event carries them all).
    static let minimumInterval: Duration = .seconds(1)
    static let keepAlive: Duration = .seconds(5)

    static func response(source: any LiveWebSource, logger: Logger) -> Response {
        // The live ECG's streams count against the same limit.
        let open = source.feed.watchers + (source.liveECG?.feed.watchers ?? 0)
        guard open < LiveWebServer.maximumEventStreams else { return tooMany() }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                _ = try await source.feed.watching(limit: LiveWebServer.maximumEventStreams) {
                    try await stream(source: source, into: &writer)
                }
                try await writer.finish(nil)
            }
        )
    }

    /// The answer to a stream beyond the server's limit.
    static func tooMany() -> Response {
        var refused = LiveWebServer.text(
            .serviceUnavailable,
            "more than \(LiveWebServer.maximumEventStreams) live pages are open; close one\n"
        )
        // The connection goes with the answer, so refused streams do not hold the server's connections.
        refused.headers[.connection] = "close"
        return refused
    }

    enum Wake: Sendable {
        case changed(UInt64)
        case keepAlive
        case stop
    }

    /// What ends a stream's wait: a change of `feed` after `version`, the keep-alive's time, or the end.
    static func nextWake(after version: UInt64, feed: LiveFeed) async -> Wake {
        await withTaskGroup(of: Wake.self) { group in
            group.addTask { await feed.next(after: version).map(Wake.changed) ?? .stop }
            group.addTask {
                do {
                    try await Task.sleep(for: keepAlive)
                    return .keepAlive
                } catch {
                    return .stop
                }
            }
            group.addTask {
                // Returns at a graceful shutdown, or throws when cancelled (the stream already ended).
                try? await gracefulShutdown()
                return .stop
            }
            let first = await group.next() ?? .stop
            group.cancelAll()
            return first
        }
    }

    private static func stream(source: any LiveWebSource, into writer: inout any ResponseBodyWriter) async throws {
        var version = source.feed.version
        // A shutdown that began while the stream slept is not announced again: it is asked for at each turn.
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let buffer = ByteBuffer(string: "event: status\ndata: " + source.status().json + "\n\n")
            try await writer.write(buffer)
            try await Task.sleep(for: minimumInterval)
            // The next change, or a keep-alive comment when none comes; systoled stopping ends the stream (the
            // server waits for open responses before it stops).
            waiting: while !Task.isShuttingDownGracefully {
                switch await nextWake(after: version, feed: source.feed) {
                case .changed(let next):
                    version = next
                    break waiting
                case .keepAlive:
                    try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                case .stop:
                    return
                }
            }
        }
    }
}
