import Logging
import PostgresNIO
import SystoleTestSupport

@testable import Replication

extension PostgresServer {
    /// A connection to this server as a receiver makes one (GuardedConnection, SCRAM, messages up to 1 MiB), with
    /// its role and password, without TLS.
    func receiverConnection(logger: Logger = Logger(label: "test")) async throws -> PostgresConnection {
        let settings = ReplicationSettings(
            host: "127.0.0.1",
            port: port,
            username: user,
            password: password,
            database: database,
            tls: .disable,
            receiver: "room-1"
        )
        return try await GuardedConnection.connect(
            Replicator.endpoint(settings, limits: .init(largestMessage: 1 << 20, authentication: .scram)),
            id: 1,
            logger: logger
        )
    }
}
