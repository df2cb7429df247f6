import Logging
import PostgresNIO

/// Runs `body` in a transaction on `connection`: committed when it returns, rolled back when it throws (with its
/// own error, not the rollback's).
func inTransaction<Result: Sendable>(
    _ connection: PostgresConnection,
    logger: Logger,
    _ body: (PostgresConnection) async throws -> Result
) async throws -> Result {
    try await connection.query("BEGIN", logger: logger)
    do {
        let result = try await body(connection)
        try await connection.query("COMMIT", logger: logger)
        return result
    } catch {
        _ = try? await connection.query("ROLLBACK", logger: logger)
        throw error
    }
}
