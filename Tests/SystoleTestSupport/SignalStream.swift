import DBus

/// Signals as a stream, for tests that read them in order: a stream of the test's own fed by the binding's one
/// subscription primitive, as a consumer in another task would build it.
public typealias SignalStream = AsyncThrowingStream<DBusSignal, any Error>

extension DBusConnection {
    /// The signals `rule` matches, from now on, in order. The stream ends when the connection closes (throwing
    /// when it was lost), and the subscription ends when the consumer stops iterating.
    public func signals(matching rule: DBusMatchRule) async throws(DBusError) -> SignalStream {
        let (stream, continuation) = SignalStream.makeStream()
        let subscription = try await subscribe(to: rule) { continuation.yield($0) }
        let lifetime = Task {
            do {
                try await subscription.ended()
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in lifetime.cancel() }
        return stream
    }
}
