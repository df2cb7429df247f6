import NIOCore
import PostgresNIO
import Synchronization

extension Replicator {
    /// PostgreSQL did not answer within ``answerDeadline``.
    struct NoAnswer: Error, CustomStringConvertible {
        var limit: Duration
        var description: String {
            "no answer within \(limit.components.seconds) s (is PostgreSQL running, and reachable from here?)"
        }
    }

    /// The connection closed (the server went away, or a deadline closed it) while a request waited for it.
    struct ConnectionClosed: Error, CustomStringConvertible {
        var description: String { "the connection to PostgreSQL closed (is PostgreSQL running?)" }
    }

    /// Runs `body` and returns what it returns, or throws ``NoAnswer`` once `limit` passes (then `closing` is closed)
    /// or ``ConnectionClosed`` when `closing` closes first, without waiting for `body` to end: postgres-nio never
    /// answers a request written to a connection that closed meanwhile (its write fails unheard), and a wait for
    /// it would be a wait for ever. A `body` that never ends is left suspended; it holds nothing but its closure.
    static func withDeadline<T: Sendable>(
        _ limit: Duration,
        closing connection: PostgresConnection? = nil,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let outcome = FirstOutcome<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.waiting(continuation)
                let work = Task {
                    do { outcome.finish(.success(try await body())) } catch { outcome.finish(.failure(error)) }
                }
                // Watches the clock and the connection (a quarter of a second at a time, only while a request is
                // out: a callback on the connection's close would stay registered for the connection's life).
                let timer = Task {
                    let end = ContinuousClock.now + limit
                    while ContinuousClock.now < end {
                        if connection?.isClosed == true {
                            outcome.finish(.failure(ConnectionClosed()))
                            return
                        }
                        try? await Task.sleep(for: min(.milliseconds(250), end - .now))
                        guard !Task.isCancelled else { return }
                    }
                    if outcome.finish(.failure(NoAnswer(limit: limit))), let connection {
                        let _: EventLoopFuture<Void> = connection.close()
                    }
                }
                outcome.whenFinished {
                    work.cancel()
                    timer.cancel()
                }
            }
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
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

/// The first of several outcomes racing for one continuation: the others are dropped.
final class FirstOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var cleanup: (@Sendable () -> Void)?
        var finished = false
    }
    private let state = Mutex(State())

    /// The continuation to resume; resumed at once if an outcome came first.
    func waiting(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Runs `cleanup` once finished (at once if it is).
    func whenFinished(_ cleanup: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.finished { return true }
            state.cleanup = cleanup
            return false
        }
        if now { cleanup() }
    }

    /// Offers an outcome; returns whether it was the first.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let taken = state.withLock { state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?)? in
            guard !state.finished else { return nil }
            state.finished = true
            state.result = result
            defer {
                state.continuation = nil
                state.cleanup = nil
            }
            return (state.continuation, state.cleanup)
        }
        guard let taken else { return false }
        taken.0?.resume(with: result)
        taken.1?()
        return true
    }
}
