import Foundation
import Hummingbird
import HummingbirdCore
import LiveFeed
import Logging
import NIOCore
import ServiceLifecycle

/// systoled's web server (`[http]`): the live page, the stream overlay, the workouts, their files, the live event
/// stream and `/metrics`. Every asset is its own (no CDN: the machine may be offline), every request needs the token
/// (``TokenMiddleware``), and nothing it serves can change a workout.
public struct LiveWebServer: Service {
    let configuration: LiveWebConfiguration
    let source: any LiveWebSource
    let logger: Logger

    /// Event streams open at once at most; more get 503. Each is a connection and a task: a browser on the
    /// wrong side of a loop must not take the daemon's file descriptors.
    public static let maximumEventStreams = 32
    /// Connections open at once at most (an event stream counts; a page opens two or three).
    public static let maximumConnections = 128
    /// A connection that sends nothing this long is closed (a client that opens connections and stalls).
    public static let idleTimeout: TimeAmount = .seconds(60)
    /// Connections one client address may have open at once (a browser opens six at most).
    public static let connectionsPerClient = 16
    /// A request's head must arrive within this of the connection opening or the previous response ending.
    public static let headTimeout: TimeAmount = .seconds(10)
    /// A request's body must have arrived within this of its head (the server takes no uploads).
    public static let requestTimeout: TimeAmount = .seconds(30)

    public init(configuration: LiveWebConfiguration, source: any LiveWebSource, logger: Logger) {
        self.configuration = configuration
        self.source = source
        self.logger = logger
    }

    /// How long to wait before trying an address that could not be bound again.
    public static let retryInterval: Duration = .seconds(30)

    /// Serves until systoled stops. When the address cannot be bound (another program has the port, or the unit
    /// keeps systoled off the network), it says so once and tries again every 30 s, quietly until the reason
    /// changes: recording goes on without the page.
    public func run() async throws {
        var lastFailure: String?
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                // No signals of its own: Hummingbird's default listens for SIGTERM itself, and so finished before its
                // turn in systoled's ordered shutdown, which the service group took for a failure (exit 1).
                try await makeApplication().runService(gracefulShutdownSignals: [])
                return
            } catch {
                let failure = "\(error)"
                if failure != lastFailure {
                    logger.error(
                        "the web page cannot listen on \(configuration.host) port \(configuration.port): \(failure). Free the port or choose another ([http] listen); if the unit keeps systoled off the network, install systemd/systoled.service.d/network.conf.example. Trying again every 30 s"
                    )
                    lastFailure = failure
                }
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.retryInterval) }
            }
        }
    }

    func makeApplication() -> some ApplicationProtocol {
        var quietLogger = logger
        quietLogger.logLevel = .warning
        let clients = ClientConnections()
        return Application(
            router: makeRouter(),
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [ConnectionGuard(clients: clients)],
                    idleTimeout: Self.idleTimeout
                )
            ),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: "systoled",
                availableConnectionsDelegate: MaximumAvailableConnections(Self.maximumConnections, logger: quietLogger)
            ),
            logger: quietLogger
        )
    }

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: TokenMiddleware(token: configuration.token))
        let source = self.source

        router.get("/") { _, _ in Self.page(Pages.live) }
        router.get("/overlay") { _, _ in Self.page(Pages.overlay) }
        router.get("/workouts") { _, _ in Self.page(Pages.workouts) }
        router.get("/workouts/:id") { _, _ in Self.page(Pages.workout) }
        router.get("/assets/systole.js") { _, _ in Self.asset(Assets.pageScript, type: "text/javascript; charset=utf-8")
        }
        router.get("/assets/systole.css") { _, _ in Self.asset(Assets.style, type: "text/css; charset=utf-8") }

        router.get("/api/status") { _, _ in Self.asset(source.status().json, type: "application/json") }
        router.get("/api/history") { _, _ in try Self.json(try await source.history()) }
        router.get("/api/events") { _, _ in EventStream.response(source: source, logger: logger) }
        router.get("/api/ecg") { _, _ in ECGStream.response(source: source) }
        router.get("/api/workouts") { _, _ in try Self.json(try await source.workouts()) }
        router.get("/api/workouts/:id") { _, context in
            let id = try context.parameters.require("id")
            do {
                guard Self.isWorkoutID(id), let detail = try await source.workout(id: id) else {
                    return Self.text(.notFound, "no such workout; /api/workouts lists them\n")
                }
                return try Self.json(detail)
            } catch let refusal as WorkoutRefusal {
                return Self.text(.unprocessableContent, "\(refusal)\n")
            }
        }
        router.get("/api/workouts/:id/export/:format") { _, context in
            let id = try context.parameters.require("id")
            let format = try context.parameters.require("format")
            let file: ExportedFile?
            do {
                file = Self.isWorkoutID(id) ? try await source.export(id: id, format: format) : nil
            } catch let refusal as WorkoutRefusal {
                var response = Self.text(refusal.retry ? .serviceUnavailable : .unprocessableContent, "\(refusal)\n")
                if refusal.retry { response.headers[.retryAfter] = "10" }
                return response
            }
            guard let file else {
                return Self.text(.notFound, "no such workout or format (fit, tcx, csv, rr), or privacy hides it\n")
            }
            return Response(
                status: .ok,
                headers: [
                    .contentType: file.contentType,
                    .contentDisposition: "attachment; filename=\"\(file.name)\"",
                    .cacheControl: "no-store", .xContentTypeOptions: "nosniff",
                ],
                body: Self.streamed(file.chunks)
            )
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok,
                headers: [
                    .contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store",
                    .xContentTypeOptions: "nosniff",
                ],
                body: .init(byteBuffer: ByteBuffer(bytes: source.metrics()))
            )
        }
        return router
    }

    /// A workout id as systoled makes them: a UUID (anything else is answered 404 without asking the store).
    static func isWorkoutID(_ text: String) -> Bool { UUID(uuidString: text) != nil }

    static func page(_ html: String) -> Response {
        var response = asset(html, type: "text/html; charset=utf-8")
        // The pages load nothing from elsewhere and are framed by nobody (OBS loads the overlay as a page).
        response.headers[.contentSecurityPolicy] =
            "default-src 'self'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        return response
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: type, .cacheControl: "no-store", .xContentTypeOptions: "nosniff"],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }

    static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/plain; charset=utf-8", .xContentTypeOptions: "nosniff"],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }

    /// A body written as the export makes it; a client that goes away stops the export.
    static func streamed(_ chunks: ExportChunks) -> ResponseBody {
        ResponseBody { writer in
            do {
                for try await chunk in chunks { try await writer.write(ByteBuffer(bytes: chunk)) }
            } catch {
                chunks.abandon()
                throw error
            }
            try await writer.finish(nil)
        }
    }

    static func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Response(
            status: .ok,
            headers: [.contentType: "application/json", .cacheControl: "no-store", .xContentTypeOptions: "nosniff"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value)))
        )
    }
}
