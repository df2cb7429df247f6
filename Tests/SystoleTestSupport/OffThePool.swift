import Foundation

/// Runs blocking work (waiting for a child process, reading a pipe) on a thread of its own and awaits its result.
///
/// Swift's cooperative pool has one thread per core. Tests run in parallel, so a test that blocks a pool thread
/// for seconds starves every other test on a two-core machine, and their real-time parts (sensor notification
/// rates, stale detection, simulator clocks) then fail for reasons that have nothing to do with what they test.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}
