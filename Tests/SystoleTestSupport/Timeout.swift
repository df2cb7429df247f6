/// Why `withTimeout` gave up.
public struct TimedOut: Error, CustomStringConvertible {
    public var description: String
}

/// Runs `body`, failing with `TimedOut` after `limit`, so a test that waits for something that never comes
/// fails instead of hanging the run.
public func withTimeout<T: Sendable>(
    _ limit: Duration,
    _ what: String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw TimedOut(description: "\(what) did not happen within \(limit)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
