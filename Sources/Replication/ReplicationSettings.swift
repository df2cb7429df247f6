/// Where and how systoled replicates its store (`[replication]`).
public struct ReplicationSettings: Sendable, Equatable {
    /// How the connection to PostgreSQL is protected.
    public enum TLS: String, Sendable, Equatable {
        /// No TLS (only sensible on loopback or a private link).
        case disable
        /// TLS, without checking the server's certificate (libpq's `require`).
        case require
        /// TLS, the certificate checked against `caFile` (or the system's certificates) and the host name.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var tls: TLS
    public var caFile: String?
    /// The authentications the server may ask for (`require_auth` in the address; SCRAM-SHA-256 by default).
    public var authentication: PostgresAuthentication
    /// This receiver's name in the central database (default: the host name).
    public var receiver: String
    /// Samples kept for PostgreSQL while it cannot be reached, at most; beyond that the oldest are left out of
    /// the replica (they stay in the local store), and systoled says so.
    public var backlogLimit: Int

    public static let defaultPort = 5432
    public static let defaultBacklogLimit = 5_000_000

    public init(
        host: String,
        port: Int = ReplicationSettings.defaultPort,
        username: String,
        password: String? = nil,
        database: String,
        tls: TLS,
        caFile: String? = nil,
        authentication: PostgresAuthentication = .scram,
        receiver: String,
        backlogLimit: Int = ReplicationSettings.defaultBacklogLimit
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
        self.caFile = caFile
        self.authentication = authentication
        self.receiver = receiver
        self.backlogLimit = backlogLimit
    }

    /// The address without the password, as logs and messages show it.
    public var displayAddress: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgresql://\(username)@\(shownHost):\(port)/\(database)"
    }
}
