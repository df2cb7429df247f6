import Glibc
import LiveWeb
import SafeText

extension DaemonConfiguration {
    /// The web server's settings (`[http]`): where it listens and its token.
    public struct HTTP: Sendable, Equatable {
        /// An IP address (IPv4 or IPv6), as it is bound.
        public var host: String
        public var port: Int
        /// The bearer token; nil: systoled makes one at each start (`systole web` prints the address with it).
        public var token: String?

        /// The port used when `listen` names none.
        public static let defaultPort = 8730

        public init(host: String = "127.0.0.1", port: Int = HTTP.defaultPort, token: String? = nil) {
            self.host = host
            self.port = port
            self.token = token
        }

        /// Whether the address is loopback only (127.0.0.0/8 or ::1): no other machine reaches it.
        public var isLoopback: Bool { Self.isLoopback(host) }

        static func isLoopback(_ host: String) -> Bool {
            var v4 = in_addr()
            if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
            return host == "::1"
        }
    }

    static let httpKeys = ["listen", "token"]

    /// Parses `listen`: `host:port`, `[v6]:port`, or a host alone (port 8730); the host an IP address or
    /// `localhost`.
    static func listen(_ text: String) throws(Reason) -> (host: String, port: Int) {
        let problem = Reason(
            "http.listen must be an IP address and port like \"127.0.0.1:8730\", \"[::1]:8730\" or \"0.0.0.0:8730\", not \(text.quotedExcerpt())"
        )
        var host = text
        var port = HTTP.defaultPort
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw problem }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()) else { throw problem }
                port = number
            }
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            host = String(text[..<colon])
            guard let number = Int(text[text.index(after: colon)...]) else { throw problem }
            port = number
        }
        if host == "localhost" { host = "127.0.0.1" }
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 else { throw problem }
        guard (1...65535).contains(port) else {
            throw Reason("http.listen's port must be from 1 to 65535, not \(port)")
        }
        return (host, port)
    }

    /// Checks a token: 16 to 256 characters, each a letter, digit or `-._~` (so it goes into an address as it is).
    static func token(_ text: String) throws(Reason) -> String {
        guard LiveWebConfiguration.isToken(text) else {
            throw Reason(
                "http.token must be 16 to 256 letters, digits or -._~ (make one with 'openssl rand -hex 32')"
            )
        }
        return text
    }

    mutating func applyHTTP(_ entry: TOML.Entry) throws(Reason) {
        var http = self.http ?? HTTP()
        switch entry.key {
        case "listen":
            guard case .string(let text) = entry.value else {
                throw Reason("listen must be a string in quotes, not \(entry.value.kind)")
            }
            (http.host, http.port) = try Self.listen(text)
        case "token":
            guard case .string(let text) = entry.value else {
                throw Reason("token must be a string in quotes, not \(entry.value.kind)")
            }
            http.token = try Self.token(text)
        default:
            throw Reason("unknown setting '\(entry.key)' in [http]; known: \(Self.httpKeys.joined(separator: ", "))")
        }
        self.http = http
    }

    /// A listener other machines reach needs a token: the page shows health data.
    var httpProblem: String? {
        guard let http, !http.isLoopback, http.token == nil else { return nil }
        return "[http]: listen = \"\(http.host):\(http.port)\" is reachable from other machines, so it needs a token "
            + "(token = \"…\", 16 to 256 letters or digits); or listen on 127.0.0.1"
    }
}
