import BlueZ

/// What a ``HeartRateSensor`` reports to, as things happen: the sensor's one way of handing on its readings.
///
/// As a SwiftNIO channel handler gets `channelRead` for each message and `channelReadComplete` once a read is done,
/// a delegate gets ``sensor(_:didReport:)`` for each event (a reading per notification) and
/// ``sensorDidCompleteRead(_:)`` once the readings of one read of the bus or of the sensor's socket are all
/// reported: the moment to hand them on together rather than one at a time.
public protocol HeartRateSensorDelegate: AnyObject, Sendable {
    /// An event: a state change, the sensor identified, its body location or battery, a notification rejected, or a
    /// reading. Readings come in order on the D-Bus connection's loop thread: keep this short and never block in it.
    func sensor(_ sensor: HeartRateSensor, didReport event: HeartRateSensorEvent)

    /// The readings of one read are all reported (on the loop thread, or on the sensor's task for notifications
    /// that waited for streaming to begin): hand on what was reported. It may come with nothing new (a read whose
    /// notifications wait for streaming to begin, or a session that ended meanwhile).
    func sensorDidCompleteRead(_ sensor: HeartRateSensor)

    /// ``HeartRateSensor/run()`` ended: nothing more will be reported.
    func sensorDidStop(_ sensor: HeartRateSensor)
}

extension HeartRateSensorDelegate {
    public func sensorDidCompleteRead(_ sensor: HeartRateSensor) {}
    public func sensorDidStop(_ sensor: HeartRateSensor) {}
}

/// A delegate that puts a sensor's events in a stream, for a consumer that iterates them on a task of its own
/// (`systole monitor`, tests). The stream ends when the sensor stops; when nobody reads, the newest 4 096 are kept.
public final class HeartRateSensorEventStream: HeartRateSensorDelegate {
    /// The events, in order. Iterate from one task.
    public let events: AsyncStream<HeartRateSensorEvent>
    private let continuation: AsyncStream<HeartRateSensorEvent>.Continuation

    public init() {
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    public func sensor(_ sensor: HeartRateSensor, didReport event: HeartRateSensorEvent) {
        continuation.yield(event)
    }

    public func sensorDidStop(_ sensor: HeartRateSensor) {
        continuation.finish()
    }
}
