import Foundation
import Glibc

/// A PostgreSQL connection URI as libpq and psql take it:
/// `postgresql://[user[:password]@]host[:port][/database][?sslmode=…&sslrootcert=…]`.
///
/// `sslmode` is `disable`, `require` or `verify-full`; without it, `disable` on loopback and `verify-full`
/// anywhere else (stricter than libpq's `prefer`: heart rate should not cross a network in the clear, nor to a
/// server that only says it is the right one). `sslrootcert` names the CA file to check the server against
/// (default: the system's certificates).
public struct PostgresAddress: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    public var database: String?
    public var tls: ReplicationSettings.TLS
    public var caFile: String?
    /// The authentications accepted from the server (`require_auth`, as libpq takes it): SCRAM-SHA-256 unless the
    /// address says otherwise; `password` (in clear text) only with `sslmode=verify-full`.
    public var authentication: PostgresAuthentication = .scram

    /// Why an address was refused, in words for the configuration's or the command line's error.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// The longest address taken.
    public static let maximumLength = 2048

    public init(parsing text: String) throws(Problem) {
        let example = "like \"postgresql://systole@db.example.org/systole?sslmode=verify-full\""
        guard text.utf8.count <= Self.maximumLength, !text.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw Problem("a PostgreSQL address is at most \(Self.maximumLength) printable characters")
        }
        var rest: Substring
        if text.hasPrefix("postgresql://") {
            rest = text.dropFirst("postgresql://".count)
        } else if text.hasPrefix("postgres://") {
            rest = text.dropFirst("postgres://".count)
        } else {
            throw Problem("a PostgreSQL address starts with postgresql://, \(example)")
        }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                username = try Self.decoded(credentials[..<colon], "user name")
                password = try Self.decoded(credentials[credentials.index(after: colon)...], "password")
            } else {
                username = try Self.decoded(credentials, "user name")
            }
            if username?.isEmpty == true { username = nil }
        }
        host = String(rest)
        port = ReplicationSettings.defaultPort
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw Problem("an IPv6 address needs its ], \(example)") }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else {
                    throw Problem("after an IPv6 address in brackets comes :PORT, \(example)")
                }
                port = number
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = String(rest[..<colon])
            guard let number = Int(rest[rest.index(after: colon)...]) else {
                throw Problem("the port must be a number, \(example)")
            }
            port = number
        }
        guard (1...65535).contains(port) else { throw Problem("the port must be from 1 to 65535, not \(port)") }
        guard Self.isHost(host) else {
            throw Problem(
                "\(host.isEmpty ? "the host is missing" : "the host is not a host name or IP address"), \(example)"
            )
        }
        let name = try Self.decoded(path, "database name")
        database = name.isEmpty ? nil : name
        guard (database?.utf8.count ?? 0) <= 63, (username?.utf8.count ?? 0) <= 63 else {
            throw Problem("PostgreSQL's names (user, database) are at most 63 bytes")
        }
        var mode: ReplicationSettings.TLS?
        for parameter in query.split(separator: "&") where !parameter.isEmpty {
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0])
            let value = try Self.decoded(parts.count > 1 ? parts[1] : "", key)
            switch key {
            case "sslmode":
                guard let parsed = ReplicationSettings.TLS(rawValue: value) else {
                    throw Problem("sslmode is disable, require or verify-full")
                }
                mode = parsed
            case "require_auth":
                authentication = try Self.authentication(value)
            case "sslrootcert":
                guard value.hasPrefix("/") else { throw Problem("sslrootcert must be an absolute path") }
                caFile = value
            default:
                throw Problem("the address takes sslmode, sslrootcert and require_auth, not '\(key.prefix(32))'")
            }
        }
        tls = mode ?? (Self.isLoopback(host) ? .disable : .verifyFull)
        if caFile != nil, tls != .verifyFull {
            throw Problem("sslrootcert is for sslmode=verify-full")
        }
        if authentication.contains(.password), tls != .verifyFull {
            throw Problem(
                "require_auth=password sends the password in clear text: only with sslmode=verify-full (the server "
                    + "proven by its certificate)"
            )
        }
    }

    /// `require_auth`'s comma-separated names.
    private static func authentication(_ value: String) throws(Problem) -> PostgresAuthentication {
        var accepted: PostgresAuthentication = []
        for name in value.split(separator: ",", omittingEmptySubsequences: false) {
            guard let method = PostgresAuthentication.names.first(where: { $0.0 == name })?.1 else {
                let names = PostgresAuthentication.names.map(\.0).joined(separator: ", ")
                throw Problem("require_auth takes \(names), separated by commas, not '\(name.prefix(32))'")
            }
            accepted.insert(method)
        }
        return accepted
    }

    /// Whether only this machine reaches `host`: `localhost`, an address in 127.0.0.0/8, or ::1. Parsed as an address,
    /// so a name that merely starts with "127." (`127.example.org`) is not loopback and gets TLS by default.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
    }

    /// A host name (letters, digits and dashes in dot-separated labels) or an IP address.
    static func isHost(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        if text.contains(":") {
            var v6 = in6_addr()
            return inet_pton(AF_INET6, text, &v6) == 1
        }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.utf8.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy { $0 == UInt8(ascii: "-") || isAlphanumeric($0) }
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    /// Percent-decoding; the result must be text without control characters.
    private static func decoded(_ part: Substring, _ what: String) throws(Problem) -> String {
        guard let text = String(part).removingPercentEncoding,
            !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { throw Problem("the \(what) in the address is not valid percent-encoded text") }
        return text
    }
}
