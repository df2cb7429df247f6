import Glibc
import Replication
import SafeText

extension DaemonConfiguration {
    static let replicationKeys = ["postgres", "password", "receiver", "backlog_limit"]

    /// The receiver's name when none is configured: the host name.
    static func defaultReceiverName() -> String {
        let name = hostName().filter { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
        return name.isEmpty ? "receiver" : String(name.prefix(64))
    }

    /// This machine's host name, as `gethostname` gives it (empty if it cannot).
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, 255) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    mutating func applyReplication(_ entry: TOML.Entry) throws(Reason) {
        var replication =
            self.replication
            ?? ReplicationSettings(
                host: "",
                username: "",
                database: "",
                tls: .disable,
                receiver: Self.defaultReceiverName()
            )
        func text() throws(Reason) -> String {
            guard case .string(let text) = entry.value else {
                throw Reason("\(entry.key) must be a string in quotes, not \(entry.value.kind)")
            }
            return text
        }
        switch entry.key {
        case "postgres":
            let given = try text()
            let address: PostgresAddress
            do {
                address = try PostgresAddress(parsing: given)
            } catch {
                throw Reason("replication.postgres: \(error.description)")
            }
            guard let username = address.username else {
                throw Reason(
                    "replication.postgres must name the user, like \"postgresql://systole@db.example.org/systole\""
                )
            }
            replication.host = address.host
            replication.port = address.port
            replication.username = username
            replication.database = address.database ?? username
            replication.tls = address.tls
            replication.caFile = address.caFile
            replication.authentication = address.authentication
            if let password = address.password { replication.password = password }
        case "password":
            let password = try text()
            guard (1...1024).contains(password.utf8.count), !password.utf8.contains(0) else {
                throw Reason("replication.password must be 1 to 1024 characters")
            }
            replication.password = password
        case "receiver":
            let name = try text()
            guard (1...64).contains(name.utf8.count),
                name.utf8.allSatisfy({ isalnum(Int32($0)) != 0 || "-_.".utf8.contains($0) })
            else {
                throw Reason(
                    "replication.receiver must be 1 to 64 letters, digits, - _ or ., like \"room-1\"; not "
                        + name.quotedExcerpt()
                )
            }
            replication.receiver = name
        case "backlog_limit":
            // About 140 bytes a sample on the receiver's disk: the most is some 7 GB, a month of a hundred straps at 4 Hz.
            guard case .integer(let limit) = entry.value, (10_000...50_000_000).contains(limit) else {
                throw Reason(
                    "replication.backlog_limit is a whole number of samples, from 10000 to 50000000 (about 140 bytes "
                        + "each on this machine's disk while they wait)"
                )
            }
            replication.backlogLimit = limit
        default:
            throw Reason(
                "unknown setting '\(entry.key)' in [replication]; known: \(Self.replicationKeys.joined(separator: ", "))"
            )
        }
        self.replication = replication
    }

    /// What the `[replication]` table lacks once it is read whole.
    var replicationProblem: String? {
        guard let replication else { return nil }
        if replication.host.isEmpty {
            return "[replication]: postgres is missing, like postgres = \"postgresql://systole@db.example.org/systole\""
        }
        return nil
    }
}
