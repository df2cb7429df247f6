/// Where the web server listens and the token every request must carry.
public struct LiveWebConfiguration: Sendable, Equatable {
    /// An IPv4 or IPv6 address (`127.0.0.1`, `::1`, `0.0.0.0`).
    public var host: String
    public var port: Int
    /// The bearer token: from `[http] token`, or made at each start when that is absent (loopback only).
    public var token: String

    public init(host: String, port: Int, token: String) {
        self.host = host
        self.port = port
        self.token = token
    }

    /// The address to open in a browser on this machine, the token after `#` (never sent to a server; the page keeps
    /// it; a wildcard listener is reached through loopback).
    public var pageAddress: String {
        let reachable: String =
            switch host {
            case "0.0.0.0": "127.0.0.1"
            case "::": "::1"
            default: host
            }
        let hostPart = reachable.contains(":") ? "[\(reachable)]" : reachable
        return "http://\(hostPart):\(port)/#token=\(token)"
    }
}
