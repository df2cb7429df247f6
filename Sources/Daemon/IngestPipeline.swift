import Logging
import ServiceLifecycle

/// A reading as the workout stage recorded it, with the workout as it was then: what the output stage shows.
struct RecordedReading: Sendable {
    var reading: DaemonReading
    var workout: WorkoutSnapshot
}

/// The way a heart-rate notification travels through systoled, from the bus to a stored sample and a live-log
/// line: three stages and one hand-off between them.
///
/// 1. **Loop-thread stage**, on the D-Bus connection's thread, for everything one bus tick read. A
///    `PropertiesChanged` carrying a characteristic's `Value: ay` alone is read straight from libdbus's buffer
///    (`DBus/ByteValueChange`) and routed by object path to the notify session of its `HeartRateSensor`
///    (`DBusConnection.routeByteValue`); a sensor on AcquireNotify (`[bluetooth] notify`, the default) has a socket
///    instead, polled with the bus and read in the same tick (`DBusConnection.readDatagrams`), each datagram handed
///    to the same session handler. The sensor's `HeartRateReadingProcessor` bounds the rate, decodes 0x2A37 and
///    places the RR intervals and reports the reading to its delegate, ``SensorManager``, which holds it; when the
///    read is complete (the route's or socket's read-complete, as SwiftNIO's `channelReadComplete`) the sensor
///    says so, and the manager publishes what it holds, every sensor's readings of that tick, as one batch. Any
///    other message takes the bus's general path.
/// 2. **The hand-off**: the batch is put in this pipeline's ``Mailbox``; the workout thread takes everything that
///    is waiting in one go, so a tick that arrives while a commit runs goes into the next commit.
/// 3. **Workout stage**, on the ``WorkoutThread``: ``WorkoutManager/record(_:)`` turns the readings into samples
///    (`LiveWorkoutDataSource`), updates the builder's statistics and commits them to the store in one
///    transaction, waiting in place (synced to the disk at once with `[store] sync = "commit"`, at most half a
///    second later by the store's own thread with `"second"`). It returns the readings with the workout's
///    snapshot: nothing is read back.
/// 4. **Output stage**, on the same thread right after the commit: the live log's lines in one write, the
///    control API's properties, announced at most once a second, and the live outputs: the ``LiveFeed`` told,
///    which wakes the web page's event streams and the MQTT publisher (each
///    builds what it shows on its own task, at its own pace).
final class IngestPipeline: Service {
    /// Where the output stage sends a recorded batch.
    struct Outputs: Sendable {
        /// Writes the batch's live-log lines in one write.
        var liveLog: @Sendable ([RecordedReading]) -> Void
        /// Tells the announcers a batch was recorded (they announce at most once a second).
        var recorded: @Sendable () -> Void
        /// Tells the live outputs (web page, MQTT) that something changed; they build what they show on their own
        /// tasks, so a slow one never holds this stage.
        var live: @Sendable () -> Void = {}
        /// Counts readings the backlog dropped (/metrics).
        var dropped: @Sendable (Int) -> Void = { _ in }
    }

    private let readings: Broadcast<DaemonReading>
    private let workouts: WorkoutManager
    private let outputs: Outputs
    private let logger: Logger

    /// Readings waiting for the workout at most; beyond that the oldest are dropped (and logged). A commit may wait for
    /// the disk (every one with `sync = "commit"`), and a slow disk or a checkpoint can hold one for a good part of a second: at the flood benchmark's
    /// 9 000 readings a second, 4 096 were not always enough. About 3.5 s of that flood, 80 s of a hundred sensors
    /// at 4 Hz; the memory (about 6 MiB when full: 120 bytes a reading and its RR intervals) is taken only while
    /// they wait.
    static let backlogLimit = 32768

    init(readings: Broadcast<DaemonReading>, workouts: WorkoutManager, outputs: Outputs, logger: Logger) {
        self.readings = readings
        self.workouts = workouts
        self.outputs = outputs
        self.logger = logger
    }

    func run() async throws {
        // Subscribed before recovering, so nothing published meanwhile is missed.
        let batches = readings.subscribeBatches(buffering: Self.backlogLimit)
        try await workouts.recover()
        await withTaskExecutorPreference(WorkoutThread.shared) {
            await cancelWhenGracefulShutdown {
                while let batch = await batches.next() {
                    let dropped = Self.warnOfDroppedReadings(in: batches, logger: self.logger)
                    if dropped > 0 { self.outputs.dropped(dropped) }
                    let recorded = await self.workouts.record(batch)
                    self.outputs.liveLog(recorded)
                    self.outputs.recorded()
                    self.outputs.live()
                }
            }
        }
        // The workout stays journaled: the next start recovers it. What was collected is committed first.
        await workouts.flush()
    }

    /// Logs a warning when `readings` dropped some since the last call: they never reached the workout, and the
    /// log and /metrics are the only places that say so. Returns how many.
    @discardableResult
    static func warnOfDroppedReadings(in readings: Mailbox<some Sendable>, logger: Logger) -> Int {
        let dropped = readings.takeDropped()
        guard dropped > 0 else { return 0 }
        logger.warning(
            "\(dropped) readings were dropped: more than \(readings.limit) arrived while the workout was still saving earlier ones (a slow or stalled disk, or more sensors than this machine keeps up with). Check the disk that holds the store (its health, and other programs writing to it), or record with fewer sensors"
        )
        return dropped
    }
}
