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

    /// The lengths a token may have: shorter ones can be guessed, longer ones are a mistake.
    public static let tokenLengths = 16...256

    /// Whether `text` can be a token: 16 to 256 characters, each a letter, digit or `-._~`, so it goes into an
    /// address as it is.
    public static func isToken(_ text: String) -> Bool {
        tokenLengths.contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: "~")
            }
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
