import Hummingbird
import HummingbirdCore

/// Lets a request through only with the token: as `Authorization: Bearer …` (Prometheus, scripts), as the
/// `systole_token` cookie (the page's own requests), or as `?token=…` (the address `systole web` prints, an OBS
/// browser source). A page opened with the token in its address is answered with the cookie and sent to the same
/// address without it, so the token does not stay in the address bar or the history.
struct TokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: String
    static var cookieName: String { "systole_token" }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let query = request.uri.queryParameters["token"], matches(String(query)) {
            if request.method == .get, Self.isPage(request.uri.path) {
                var response = Response.redirect(to: Self.withoutToken(request.uri), type: .normal)
                response.setCookie(cookie)
                return response
            }
            return try await next(request, context)
        }
        if let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer "),
            matches(String(authorization.dropFirst("Bearer ".count)))
        {
            return try await next(request, context)
        }
        if let value = request.cookies[Self.cookieName]?.value, matches(value) {
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

    private var cookie: Cookie {
        Cookie(name: Self.cookieName, value: token, path: "/", httpOnly: true, sameSite: .strict)
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
}
