import Logging
import PostgresNIO

/// `withTransaction` with the error that caused a failure, not postgres-nio's wrapper around it (which names our
/// source file and line, and would make the log and `systole status` hard to read).
func inTransaction<Result: Sendable>(
    _ client: PostgresClient,
    logger: Logger,
    _ body: (PostgresConnection) async throws -> Result
) async throws -> Result {
    do {
        return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
    } catch let error as PostgresTransactionError {
        throw error.closureError ?? error.beginError ?? error.commitError ?? error
    }
}
