/// What `operation` returns, or nil when it has not returned within `limit`.
///
/// Unlike `withTimeout` this does not wait for the operation to end: a call awaiting a continuation that is never
/// resumed cannot be cancelled, and the test must fail rather than hang with it.
func outcome<T: Sendable>(within limit: Duration, of operation: @escaping @Sendable () async -> T) async -> T? {
    let (results, continuation) = AsyncStream.makeStream(of: T?.self)
    Task { continuation.yield(await operation()) }
    let timer = Task {
        try? await Task.sleep(for: limit)
        continuation.yield(nil)
    }
    defer { timer.cancel() }
    var iterator = results.makeAsyncIterator()
    return await iterator.next() ?? nil
}
