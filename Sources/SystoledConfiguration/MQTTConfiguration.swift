import Glibc
import MQTTBridge
import SafeText

extension DaemonConfiguration {
    static let mqttKeys = [
        "broker", "username", "password", "ca_file", "client_id", "topic_prefix", "discovery_prefix", "queue_limit",
    ]

    /// Parses `broker`: `mqtt://host[:port]` (1883) or `mqtts://host[:port]` (8883, TLS); the host a name or an IP
    /// address (IPv6 in brackets). Credentials go in `username` and `password`, never in the address (it is logged).
    static func broker(_ text: String) throws(Reason) -> (host: String, port: Int, tls: Bool) {
        let problem = Reason(
            "mqtt.broker must be an address like \"mqtt://192.168.1.10:1883\" or \"mqtts://broker.example.org\", not \(text.quotedExcerpt())"
        )
        let tls: Bool
        var rest: Substring
        if text.hasPrefix("mqtt://") {
            tls = false
            rest = text.dropFirst("mqtt://".count)
        } else if text.hasPrefix("mqtts://") {
            tls = true
            rest = text.dropFirst("mqtts://".count)
        } else {
            throw problem
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("@") else {
            throw Reason("mqtt.broker must not hold credentials: put them in username and password")
        }
        guard !rest.contains("/"), !rest.contains("?"), !rest.isEmpty else { throw problem }
        var host = String(rest)
        var port = tls ? 8883 : 1883
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw problem }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else { throw problem }
                port = number
            }
            var v6 = in6_addr()
            guard inet_pton(AF_INET6, host, &v6) == 1 else { throw problem }
        } else {
            if let colon = rest.firstIndex(of: ":") {
                host = String(rest[..<colon])
                guard let number = Int(rest[rest.index(after: colon)...]) else { throw problem }
                port = number
            }
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            guard host.utf8.count <= 253,
                labels.allSatisfy({ label in
                    (1...63).contains(label.utf8.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                        && label.utf8.allSatisfy { $0 == UInt8(ascii: "-") || isalnum(Int32($0)) != 0 }
                })
            else { throw problem }
        }
        guard (1...65535).contains(port) else {
            throw Reason("mqtt.broker's port must be from 1 to 65535, not \(port)")
        }
        return (host, port, tls)
    }

    /// Checks a topic prefix: 1 to 64 letters, digits, `_`, `-` and `/` between levels; no MQTT wildcards.
    static func topicPrefix(_ text: String, _ name: String) throws(Reason) -> String {
        let allowed = text.utf8.allSatisfy {
            isalnum(Int32($0)) != 0 || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "/")
        }
        guard (1...64).contains(text.utf8.count), allowed, !text.hasPrefix("/"), !text.hasSuffix("/"),
            !text.contains("//")
        else {
            throw Reason(
                "mqtt.\(name) must be 1 to 64 letters, digits, _ or -, with / between levels, like \"systole\" or \"home/gym\"; not \(text.quotedExcerpt())"
            )
        }
        return text
    }

    /// The client id when none is configured: `systoled-` and the host name, so two receivers do not push each
    /// other off the broker.
    static func defaultClientID() -> String {
        let name = hostName().filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        return "systoled" + (name.isEmpty ? "" : "-" + name.prefix(40))
    }

    mutating func applyMQTT(_ entry: TOML.Entry) throws(Reason) {
        var mqtt = self.mqtt ?? MQTTSettings(host: "", port: 0, clientID: Self.defaultClientID())
        func text() throws(Reason) -> String {
            guard case .string(let text) = entry.value else {
                throw Reason("\(entry.key) must be a string in quotes, not \(entry.value.kind)")
            }
            return text
        }
        switch entry.key {
        case "broker":
            (mqtt.host, mqtt.port, mqtt.usesTLS) = try Self.broker(try text())
        case "username":
            let name = try text()
            guard (1...256).contains(name.utf8.count), !name.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw Reason("mqtt.username must be 1 to 256 characters without control characters")
            }
            mqtt.username = name
        case "password":
            let password = try text()
            guard (1...1024).contains(password.utf8.count), !password.utf8.contains(0) else {
                throw Reason("mqtt.password must be 1 to 1024 characters")
            }
            mqtt.password = password
        case "ca_file":
            mqtt.caFile = try Self.path(try text(), "ca_file")
        case "client_id":
            let id = try text()
            guard (1...64).contains(id.utf8.count),
                id.utf8.allSatisfy({ isalnum(Int32($0)) != 0 || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
            else {
                throw Reason(
                    "mqtt.client_id must be 1 to 64 letters, digits, - or _, not \(try text().quotedExcerpt())"
                )
            }
            mqtt.clientID = id
        case "topic_prefix":
            mqtt.topicPrefix = try Self.topicPrefix(try text(), "topic_prefix")
        case "discovery_prefix":
            mqtt.discoveryPrefix = try Self.topicPrefix(try text(), "discovery_prefix")
        case "queue_limit":
            guard case .integer(let limit) = entry.value, (10...100_000).contains(limit) else {
                throw Reason("mqtt.queue_limit is a whole number of messages, from 10 to 100000")
            }
            mqtt.queueLimit = limit
        default:
            throw Reason("unknown setting '\(entry.key)' in [mqtt]; known: \(Self.mqttKeys.joined(separator: ", "))")
        }
        self.mqtt = mqtt
    }

    /// What the `[mqtt]` table lacks or contradicts once it is read whole.
    var mqttProblem: String? {
        guard let mqtt else { return nil }
        if mqtt.host.isEmpty { return "[mqtt]: broker is missing, like broker = \"mqtt://192.168.1.10:1883\"" }
        if mqtt.password != nil, mqtt.username == nil { return "[mqtt]: a password needs a username" }
        if mqtt.caFile != nil, !mqtt.usesTLS {
            return "[mqtt]: ca_file is for TLS; use an mqtts:// broker address, or leave ca_file out"
        }
        return nil
    }
}
