import NIOCore
import PostgresNIO

extension Replicator {
    /// PostgreSQL did not answer within ``answerDeadline``.
    struct NoAnswer: Error, CustomStringConvertible {
        var limit: Duration
        var description: String {
            "no answer within \(limit.components.seconds) s (is PostgreSQL running, and reachable from here?)"
        }
    }

    /// Runs `body`, cancelled when it takes longer than `limit`; then `closing` is closed first, so that a body
    /// waiting for the server ends at once.
    static func withDeadline<T: Sendable>(
        _ limit: Duration,
        closing connection: PostgresConnection? = nil,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                if let connection { let _: EventLoopFuture<Void> = connection.close() }
                throw NoAnswer(limit: limit)
            }
            return value
        }
    }

    /// An error in words: PostgreSQL's own message when it sent one, else the connection's.
    public static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let code = error.serverInfo?[.sqlState].map { " (\($0))" } ?? ""
                return "PostgreSQL says: \(message)\(code)"
            }
            if let underlying = error.underlying {
                if let refused = underlying as? ServerRefused { return refused.description }
                return "\(underlying)"
            }
            return "\(error.code)"
        }
        return "\(error)"
    }
}
