import Synchronization

/// Hands every published value to every current subscriber (each has its own buffered stream), so one sensor
/// reading reaches the workout, the live log and the D-Bus properties alike.
final class Broadcast<Value: Sendable>: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<Value>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)

    /// A stream of everything published from now on; it ends when the consumer stops iterating.
    func subscribe(buffering limit: Int = 1024) -> AsyncStream<Value> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(limit))
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    func publish(_ value: Value) {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(value) }
    }

    /// Ends every subscriber's stream.
    func finish() {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
