import Synchronization

/// Hands every published value to every current subscriber (each has its own buffer), so one sensor reading
/// reaches the workout, the live log and the D-Bus properties alike.
package final class Broadcast<Value: Sendable>: Sendable {
    /// Each subscriber takes a batch of values, or nil at the end.
    private let subscribers = Mutex<[Int: @Sendable ([Value]?) -> Void]>([:])
    private let nextID = Atomic<Int>(0)

    /// A stream of everything published from now on; it ends when the consumer stops iterating.
    package func subscribe(buffering limit: Int = 1024) -> AsyncStream<Value> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(limit))
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock {
            $0[id] = { values in
                guard let values else { return continuation.finish() }
                for value in values { continuation.yield(value) }
            }
        }
        return stream
    }

    /// Everything published from now on, handed over in batches: each ``Mailbox/next()`` takes all that came
    /// since the last, so a consumer that is slower than a burst handles the burst in one go.
    package func subscribeBatches(buffering limit: Int = 4096) -> Mailbox<Value> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let mailbox = Mailbox<Value>(limit: limit) { [weak self] in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock {
            $0[id] = { values in
                if let values { mailbox.put(contentsOf: values) } else { mailbox.finish() }
            }
        }
        return mailbox
    }

    /// How many subscribers are listening now.
    package var subscriberCount: Int { subscribers.withLock { $0.count } }

    package func publish(_ value: Value) { publish(contentsOf: [value]) }

    /// Publishes `values` together: a batch subscriber gets them in one batch.
    package func publish(contentsOf values: [Value]) {
        guard !values.isEmpty else { return }
        for deliver in subscribers.withLock({ Array($0.values) }) { deliver(values) }
    }

    /// Ends every subscriber's stream.
    package func finish() {
        for deliver in subscribers.withLock({ Array($0.values) }) { deliver(nil) }
    }
}
