import Foundation
import Hummingbird
import LiveFeed
import NIOCore
import ServiceLifecycle

/// The live ECG as server-sent events: at once the last seconds of every sensor's ECG, then an `ecg` event per
/// piece as it is recorded (an H10 sends one about every 0.56 s), and a comment every 5 s without one. 404 when
/// the ECG is not shown (`privacy = "duration-only"`). Its streams count with the status streams against the
/// server's limit of event streams.
enum ECGStream {
    static func response(source: any LiveWebSource) -> Response {
        guard let ecg = source.liveECG else {
            return LiveWebServer.text(.notFound, "the ECG is not shown here (privacy = \"duration-only\")\n")
        }
        guard source.feed.watchers + ecg.feed.watchers < LiveWebServer.maximumEventStreams else {
            return EventStream.tooMany()
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                _ = try await ecg.feed.watching(limit: LiveWebServer.maximumEventStreams) {
                    try await stream(ecg, into: &writer)
                }
                try await writer.finish(nil)
            }
        )
    }

    private static func stream(_ ecg: LiveECG, into writer: inout any ResponseBodyWriter) async throws {
        var cursor: UInt64 = 0
        var version = ecg.feed.version
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let pieces = ecg.pieces(after: cursor)
            if let last = pieces.last {
                cursor = last.sequence
                let text = pieces.map { "event: ecg\ndata: " + $0.json + "\n\n" }.joined()
                try await writer.write(ByteBuffer(string: text))
            }
            switch await EventStream.nextWake(after: version, feed: ecg.feed) {
            case .changed(let next): version = next
            case .keepAlive: try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
            case .stop: return
            }
        }
    }
}
