import Logging
import ServiceLifecycle

/// A reading as the workout stage recorded it, with the workout as it was then: what the output stage shows.
package struct RecordedReading: Sendable {
    package var reading: DaemonReading
    package var workout: WorkoutSnapshot

    package init(reading: DaemonReading, workout: WorkoutSnapshot) {
        self.reading = reading
        self.workout = workout
    }
}

/// Something the output stage tells of every recorded batch: the live log, the control API's properties, the live
/// feed of the web page and MQTT, the metrics. Called on the workout thread right after the batch's commit, so it
/// must not block: anything slow is done on the output's own task.
package protocol RecordingOutput: Sendable {
    /// A batch was recorded: during a workout its samples are in the store.
    func didRecord(_ batch: [RecordedReading])
    /// The hand-off dropped `count` readings (its backlog was full): they never reached the workout.
    func didDrop(_ count: Int)
    /// ECG and acceleration pieces of the batch, in the order they arrived (during a workout, in the store).
    func didRecordWaveforms(_ waveforms: [DaemonWaveform])
}

extension RecordingOutput {
    package func didRecord(_ batch: [RecordedReading]) {}
    package func didRecordWaveforms(_ waveforms: [DaemonWaveform]) {}
    package func didDrop(_ count: Int) {}
}

/// The way a heart-rate notification travels through systoled, from the bus to a stored sample and a live-log
/// line: four stages and one hand-off between threads. ``run()`` calls them in order.
///
/// 1. **Sensor stage**, on the D-Bus connection's loop thread, for everything one bus tick read. A
///    `PropertiesChanged` carrying a characteristic's `Value: ay` alone is read in place from libdbus's buffer
///    (`BlueZ/ValueChange`, on a `DBus` signal route) and goes by object path to the notify session of its
///    `HeartRateSensor`; a sensor on AcquireNotify (`[bluetooth] notify`, the default) has a socket instead
///    (`BlueZ/NotificationSocket`, a descriptor watch of the bus's loop), read in the same tick, each datagram handed
///    to the same session. The sensor's `HeartRateReadingProcessor` bounds the rate, decodes 0x2A37 and places the
///    RR intervals, and reports each reading to its delegate, the ``SensorManager`` (``SensorManager/hold(_:)``);
///    when the read is complete (as SwiftNIO's `channelReadComplete`) the manager hands over everything it holds,
///    every sensor's readings of that tick, as one batch (``SensorManager/handOverHeldReadings()``).
/// 2. **The hand-off** (``takeHandedOver(from:)``): the batch waits in this pipeline's ``Mailbox``; the workout
///    thread takes everything waiting in one go, so a tick that arrives while a commit runs goes into the next one.
/// 3. **Workout stage** (``recordInWorkouts(_:)``), on the ``WorkoutThread``: ``WorkoutManager/record(_:)`` turns
///    the readings into samples (`LiveWorkoutDataSource`), updates the builder's statistics and commits them to the
///    store in one transaction, in place (synced at once with `[store] sync = "commit"`, within the second with
///    `"second"`). It returns the readings with the workout's snapshot: nothing is read back.
/// 4. **Output stage** (``output(_:)``), on the same thread right after the commit: the live log's lines in one
///    write, then every other ``RecordingOutput`` (the control API's properties, announced at most once a second;
///    the live feed, which wakes the web page's event streams and the MQTT publisher on their own tasks).
package final class RecordingPipeline: Service {
    private let readings: Broadcast<SensorReport>
    private let workouts: WorkoutManager
    private let liveLog: any RecordingOutput
    private let outputs: [any RecordingOutput]
    private let logger: Logger

    /// Readings waiting for the workout at most; beyond that the oldest are dropped (and logged). A commit may wait for
    /// the disk (every one with `sync = "commit"`), and a slow disk or a checkpoint can hold one for a good part of a
    /// second: this is seconds of the heaviest load the benchmarks play (80 s of a hundred sensors at 4 Hz), and its
    /// memory (about 120 bytes a reading and its RR intervals) is taken only while they wait.
    package static let backlogLimit = 32768

    /// A pipeline from the sensors' `readings` (``SensorManager/readings``) through `workouts` to `liveLog` and then
    /// `outputs`, in that order.
    package init(
        readings: Broadcast<SensorReport>,
        workouts: WorkoutManager,
        liveLog: any RecordingOutput,
        outputs: [any RecordingOutput],
        logger: Logger
    ) {
        self.readings = readings
        self.workouts = workouts
        self.liveLog = liveLog
        self.outputs = outputs
        self.logger = logger
    }

    package func run() async throws {
        // Subscribed before recovering, so nothing handed over meanwhile is missed.
        let handOff = readings.subscribeBatches(buffering: Self.backlogLimit)
        try await workouts.recover()
        await withTaskExecutorPreference(WorkoutThread.shared) {
            await cancelWhenGracefulShutdown {
                while let batch = await self.takeHandedOver(from: handOff) {
                    let recorded = await self.recordInWorkouts(batch)
                    self.output(recorded, waveforms: batch)
                }
            }
        }
        // The workout stays journaled: the next start recovers it. What was collected is committed first.
        await workouts.flush()
    }

    /// 2. The hand-off: every reading handed over since the last turn (nil once the sensors stopped), after
    /// telling the outputs how many the backlog dropped meanwhile.
    private func takeHandedOver(from handOff: Mailbox<SensorReport>) async -> [SensorReport]? {
        let batch = await handOff.next()
        let dropped = Self.warnOfDroppedReadings(in: handOff, logger: logger)
        if dropped > 0 {
            for output in outputs { output.didDrop(dropped) }
        }
        return batch
    }

    /// 3. The workout stage: the batch's samples committed to the workouts that take them.
    private func recordInWorkouts(_ batch: [SensorReport]) async -> [RecordedReading] {
        await workouts.record(batch)
    }

    /// 4. The output stage: the live log first, then the others; then the waveforms to those that show them.
    private func output(_ recorded: [RecordedReading], waveforms batch: [SensorReport]) {
        liveLog.didRecord(recorded)
        for output in outputs { output.didRecord(recorded) }
        let waveforms = batch.compactMap { report -> DaemonWaveform? in
            if case .waveform(let waveform) = report { waveform } else { nil }
        }
        guard !waveforms.isEmpty else { return }
        for output in outputs { output.didRecordWaveforms(waveforms) }
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
