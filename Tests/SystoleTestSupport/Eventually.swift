/// How long a test waits for something that should happen: a deadline only a real failure reaches, even on a
/// machine whose cores are all busy (scripts/stress-suite.sh). Tests wait for the condition they mean, never for a
/// fixed time, so a fast machine is not slowed down by it.
public let generousDeadline: Duration = .seconds(60)

/// Polls `condition` every `poll` until it holds or `timeout` passes; whether it held.
public func eventually(
    timeout: Duration = generousDeadline,
    every poll: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: poll)
    }
    return try await condition()
}

/// Polls `condition` until it holds; throws ``TimedOut`` naming `what` when `timeout` passes first.
public func waitUntil(
    _ what: @autoclosure () -> String,
    timeout: Duration = generousDeadline,
    every poll: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async throws {
    guard try await eventually(timeout: timeout, every: poll, condition) else {
        throw TimedOut(description: "\(what()) did not happen within \(timeout)")
    }
}

/// Polls `produce` until it gives a value, and returns it; throws ``TimedOut`` naming `what` when `timeout` passes
/// first.
public func waitFor<T>(
    _ what: @autoclosure () -> String,
    timeout: Duration = generousDeadline,
    every poll: Duration = .milliseconds(20),
    _ produce: () async throws -> T?
) async throws -> T {
    var value: T?
    try await waitUntil(what(), timeout: timeout, every: poll) {
        value = try await produce()
        return value != nil
    }
    return value!
}
