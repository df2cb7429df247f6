/// Messages waiting for the broker, at most `limit`: when full, the oldest is dropped and counted. While the broker
/// is away the queue fills with live values whose newest matter most, and it never grows past its limit whatever
/// the outage's length.
struct OutboundQueue {
    let limit: Int
    private var messages: [MQTTMessage?]
    private var head = 0
    private(set) var count = 0
    /// Dropped since the last ``takeDropped()``.
    private var dropped = 0

    init(limit: Int) {
        precondition(limit > 0)
        self.limit = limit
        messages = Array(repeating: nil, count: limit)
    }

    var isEmpty: Bool { count == 0 }

    /// Adds `message` at the end, dropping the oldest when full.
    mutating func append(_ message: MQTTMessage) {
        if count == limit {
            head = (head + 1) % limit
            count -= 1
            dropped += 1
        }
        messages[(head + count) % limit] = message
        count += 1
    }

    /// The oldest message, removed.
    mutating func removeFirst() -> MQTTMessage? {
        guard count > 0 else { return nil }
        let message = messages[head]
        messages[head] = nil
        head = (head + 1) % limit
        count -= 1
        return message
    }

    /// Puts `message` back in front (it could not be sent); the newest is dropped when full.
    mutating func prepend(_ message: MQTTMessage) {
        if count == limit {
            messages[(head + count - 1) % limit] = nil
            count -= 1
            dropped += 1
        }
        head = (head - 1 + limit) % limit
        messages[head] = message
        count += 1
    }

    mutating func takeDropped() -> Int {
        defer { dropped = 0 }
        return dropped
    }
}
