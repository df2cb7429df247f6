import Hummingbird
import HummingbirdCore

/// Asks every request for health data for the token: `/api/…`, `/metrics` and anything unknown take it as
/// `Authorization: Bearer …` (the pages' own requests, Prometheus, scripts) or as `?token=…` (a script or scraper
/// that cannot set a header). The pages and their script and style hold no health value and are served to anyone:
/// the script keeps the token in its origin's storage, which pages on the host's other ports cannot read, and sends
/// it as a header. No cookie is set, since a browser sends a host's cookies to all its ports (Home Assistant,
/// Grafana beside systoled would get the token). A page opened with `?token=…` is sent to the same address with the
/// token after `#` instead, which is never sent to a server and which the script takes out of the address.
struct TokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: String

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        if Self.isPage(path) || Self.isAsset(path) {
            if request.method == .get, Self.isPage(path), let given = request.uri.queryParameters["token"] {
                let fragment = LiveWebConfiguration.isToken(String(given)) ? "#token=" + given : ""
                return Response.redirect(to: Self.withoutToken(request.uri) + fragment, type: .normal)
            }
            return try await next(request, context)
        }
        if let query = request.uri.queryParameters["token"], matches(String(query)) {
            return try await next(request, context)
        }
        if let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer "),
            matches(String(authorization.dropFirst("Bearer ".count)))
        {
            return try await next(request, context)
        }
        return Response(
            status: .unauthorized,
            // Closed once answered: whatever the request still sends (a body, slowly) is not read.
            headers: [
                .wwwAuthenticate: "Bearer realm=\"systole\"", .contentType: "text/plain; charset=utf-8",
                .connection: "close",
            ],
            body: .init(
                byteBuffer: ByteBuffer(
                    string:
                        "systoled needs its token: open the address 'systole web' prints, or send 'Authorization: Bearer <token>' ([http] token)\n"
                )
            )
        )
    }

    /// Compares in time that depends on the length only, so response times do not tell how much of a guess was
    /// right.
    private func matches(_ candidate: String) -> Bool {
        let expected = Array(token.utf8)
        let given = Array(candidate.utf8)
        guard expected.count == given.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ given[index] }
        return difference == 0
    }

    /// The address without its `token` parameter (the overlay's `zone` stays).
    static func withoutToken(_ uri: URI) -> String {
        let rest = (uri.query ?? "").split(separator: "&").filter { !$0.hasPrefix("token=") && $0 != "token" }
        return rest.isEmpty ? uri.path : uri.path + "?" + rest.joined(separator: "&")
    }

    static func isPage(_ path: String) -> Bool {
        path == "/" || path == "/overlay" || path == "/workouts" || path.hasPrefix("/workouts/")
    }

    static func isAsset(_ path: String) -> Bool {
        path == "/assets/systole.js" || path == "/assets/systole.css"
    }
}
