import BlueZ
import Foundation
import HeartRateProfile
import HeartRateSensors
import Logging
import SQLiteStore
import Synchronization
import WorkoutAnalysis
import WorkoutKit

/// Runs the workouts: one `WorkoutSession` with its `LiveWorkoutBuilder` and `LiveWorkoutDataSource` fed by every
/// sensor, or, in a team session, one per athlete fed by that athlete's sensors. Fed batch by batch by
/// ``RecordingPipeline`` (``record(_:)``), which first has it recover the workouts the daemon was running when it
/// stopped (``recover()``). The commands are in WorkoutManager+Commands.swift.
package actor WorkoutManager {
    struct Current {
        var session: WorkoutSession
        var builder: LiveWorkoutBuilder
        var source: LiveWorkoutDataSource
        /// The data source feeds the builder. Starting sets the session running a moment before this (a few
        /// awaits): until then the workout still shows as prepared, so no reading it did not store shows as
        /// running.
        var collecting: Bool
        /// Whose it is: it takes only that athlete's sensors' readings.
        var athlete: String?
        /// Set on each athlete's workout of a team session.
        var teamSessionID: UUID?

        var workoutID: UUID { builder.workoutID }
        /// Whether it takes `reading`: an athlete's workout (solo or in a team) that athlete's, a workout of no
        /// athlete every reading. Readings are never filed under an athlete whose sensor did not send them.
        func takes(_ reading: DaemonReading) -> Bool {
            athlete == nil || reading.athlete == athlete
        }

        /// Whether it takes `waveform`, as ``takes(_:)-(DaemonReading)`` a reading.
        func takes(_ waveform: DaemonWaveform) -> Bool {
            athlete == nil || waveform.athlete == athlete
        }
    }

    /// What a workout keeps watching while readings arrive: its sensors' skin contact, and (for a team workout)
    /// when its athlete last sent one, so a strap that drops out leaves a marked gap.
    struct Watch {
        var contact = ContactWatch()
        var lastReading: Date?
    }

    let store: any HealthStore
    /// Every reading of the daemon's sensors, as the sensor manager publishes them: a starting workout watches
    /// them for its first heart rate (the workout itself is fed by ``record(_:)``).
    let readings: Broadcast<SensorReport>
    /// Turns the sensors' ECG on (a workout is in progress) or off (none is); see ``announce()``.
    let measureWaveforms: @Sendable (Bool) -> Void
    /// What ``measureWaveforms`` was last told.
    var measuringWaveforms = false
    /// The sensors as they are now (their battery levels go into a finished workout; a team session starts a
    /// workout for each athlete whose sensor is connected).
    let sensorStatuses: @Sendable () -> [SensorStatus]
    let sampleTypes: Set<SampleType>
    let clock: any WorkoutClock
    /// For the energy estimate stored with a workout whose sensors measured none.
    let profile: AthleteProfile
    /// The workouts in progress, in the order they started (a team session's by athlete).
    var workouts: [Current] = []
    /// Per workout in progress.
    var watches: [UUID: Watch] = [:]
    var latest: DaemonReading?
    /// Fires whenever a workout's state changes (not on every sample), once ``currentSnapshot`` shows the change.
    package nonisolated let changes = Broadcast<Void>()
    /// The workouts as of their last change or batch of readings, and the latest reading: read from any thread
    /// without waking the workout's.
    private nonisolated let published = Mutex<Published>(Published())

    private struct Published {
        var snapshots: [WorkoutSnapshot] = []
        var at = Date.distantPast
        var latest: DaemonReading?
    }
    /// Why the store last refused readings, while it still does: logged once when it starts, not per reading.
    var storeRefusal: String?

    /// A team workout whose athlete sent nothing for this long has a gap marked over the silence.
    static let gapThreshold: TimeInterval = 5

    let logger: Logger

    package init(
        store: any HealthStore,
        readings: Broadcast<SensorReport>,
        sensorStatuses: @escaping @Sendable () -> [SensorStatus],
        measureWaveforms: @escaping @Sendable (Bool) -> Void = { _ in },
        sampleTypes: Set<SampleType>,
        clock: any WorkoutClock,
        profile: AthleteProfile = AthleteProfile(),
        logger: Logger
    ) {
        self.logger = logger
        self.profile = profile
        self.store = store
        self.readings = readings
        self.measureWaveforms = measureWaveforms
        self.sensorStatuses = sensorStatuses
        self.sampleTypes = sampleTypes
        self.clock = clock
    }

    /// Commits everything collected so far; the workouts stay journaled, so the next start recovers them.
    package func flush() async {
        try? await store.flush()
    }

    /// Brings back the workouts that were in progress when the daemon stopped, and carries on collecting. The time
    /// the daemon was down has no samples; a marker event records it.
    package func recover() async throws {
        for session in try await WorkoutSession.recoverActiveWorkoutSessions(store: store, clock: clock) {
            let builder = session.associatedWorkoutBuilder()
            let source = LiveWorkoutDataSource(configuration: session.configuration, enabledTypes: sampleTypes)
            await source.attach(to: builder)
            // The gap starts at the last sample stored, or at the start when the workout had none yet (a sensor
            // still out of range): the time down is marked either way.
            let lastSample = try await store.samples(ofWorkout: builder.workoutID).last?.endDate
            let started = await builder.startDate
            let now = clock.now()
            let state = await session.state
            if let since = lastSample ?? started, since <= now, state == .running || state == .paused {
                try? await builder.addWorkoutEvents([
                    WorkoutEvent(
                        type: .marker,
                        start: since,
                        end: now,
                        metadata: [Self.gapKey: .string("systoled was not running; no samples in this interval")]
                    )
                ])
            }
            let metadata = await builder.metadata
            var athlete: String?
            var team: UUID?
            if case .string(let name)? = metadata[ActivityRecording.athleteKey] { athlete = name }
            if case .string(let text)? = metadata[ActivityRecording.teamSessionKey] { team = UUID(uuidString: text) }
            workouts.append(
                Current(
                    session: session,
                    builder: builder,
                    source: source,
                    collecting: true,
                    athlete: athlete,
                    teamSessionID: team
                )
            )
            watches[builder.workoutID] = Watch(lastReading: now)
        }
        await announce()
    }

    /// The metadata key of the marker event that records a time without samples: the daemon was down, or (in a
    /// team session) the athlete's sensor sent nothing.
    static let gapKey = ActivityRecording.gapKey

    /// Records a batch of readings (the workout stage of ``RecordingPipeline``): during a workout their samples are
    /// committed to the store before this returns, so whatever is shown of them survives a crash. Returns each
    /// reading with the workout as it was when the reading was recorded (for a reading no workout takes, idle).
    package func record(_ reports: [SensorReport]) async -> [RecordedReading] {
        let readings = reports.compactMap(\.heartRate)
        let waveforms = reports.compactMap { report -> DaemonWaveform? in
            if case .waveform(let waveform) = report { waveform } else { nil }
        }
        latest = readings.last ?? latest
        guard !workouts.isEmpty else {
            storeRefusal = nil
            publish([])
            return readings.map { RecordedReading(reading: $0, workout: .idle) }
        }
        if workouts.count == 1, workouts[0].teamSessionID == nil {
            let current = workouts[0]
            let taken = current.athlete == nil ? readings : readings.filter(current.takes)
            let takenWaveforms = current.athlete == nil ? waveforms : waveforms.filter(current.takes)
            guard !taken.isEmpty || !takenWaveforms.isEmpty else {
                publish([await snapshot(of: current)])
                return readings.map { RecordedReading(reading: $0, workout: .idle) }
            }
            let (shown, now) = await record(taken, takenWaveforms, into: current)
            publish([now])
            return readings.map { RecordedReading(reading: $0, workout: current.takes($0) ? shown : .idle) }
        }
        var shown: [String: WorkoutSnapshot] = [:]
        for current in workouts {
            let taken = readings.filter(current.takes)
            let takenWaveforms = waveforms.filter(current.takes)
            guard !taken.isEmpty || !takenWaveforms.isEmpty, let athlete = current.athlete else { continue }
            shown[athlete] = await record(taken, takenWaveforms, into: current).shown
        }
        await publishAll()
        return readings.map { reading in
            RecordedReading(reading: reading, workout: reading.athlete.flatMap { shown[$0] } ?? .idle)
        }
    }

    /// Records readings into one workout; returns the workout as the readings' live-log lines show it, and as it
    /// is now.
    private func record(
        _ readings: [DaemonReading],
        _ waveforms: [DaemonWaveform],
        into current: Current
    ) async -> (shown: WorkoutSnapshot, now: WorkoutSnapshot) {
        let arrival = await snapshot(of: current)
        if current.teamSessionID != nil { await watchGaps(readings, of: current) }
        let stored = await current.source.receive(
            readings.map { (Self.measurement($0.reading), Self.device($0)) }
                + waveforms.map { (Self.measurement($0.reading), Self.device($0)) }
        )
        let now = await snapshot(of: current)
        let recording = now.state == .running || now.state == .paused
        if !stored, recording {
            let reason = await current.source.lastDeliveryError.map { "\($0)" } ?? "unknown"
            if reason != storeRefusal {
                logger.error(
                    "readings could not be stored and are kept in memory until the store takes them: \(reason)"
                )
                storeRefusal = reason
            }
        } else if stored, storeRefusal != nil {
            logger.notice("the store takes readings again; those kept in memory are saved")
            storeRefusal = nil
        }
        if recording { await watchContact(readings, of: current) }
        var published = now
        published.storeError = storeRefusal
        // A line says "running" or "paused" only for a reading the workout stored. One that arrived during the
        // countdown, or as the workout ended, is logged with the state it arrived in.
        return (stored || !recording ? published : arrival, published)
    }

    /// Records each loss of skin contact that ended with these readings as an event of the workout.
    private func watchContact(_ readings: [DaemonReading], of current: Current) async {
        let id = current.workoutID
        guard var watch = watches[id] else { return }
        var ended: [WorkoutEvent] = []
        let dropped = watch.contact.dropped
        for reading in readings {
            if let event = watch.contact.observe(
                address: reading.reading.sensor.description,
                contact: reading.reading.measurement.sensorContact,
                at: reading.reading.receivedDate
            ) {
                ended.append(event)
            }
        }
        if dropped == 0, watch.contact.dropped > 0 {
            logger.warning(
                "a sensor lost contact \(ContactWatch.maximumEvents) times in this workout; later losses are not kept"
            )
        }
        // Written back before the await: a command may end the workout meanwhile.
        if watches[id] != nil { watches[id] = watch }
        guard !ended.isEmpty else { return }
        do {
            try await current.builder.addWorkoutEvents(ended)
        } catch {
            logger.warning("a loss of contact could not be recorded: \(error)")
        }
    }

    /// Marks the silence before these readings as a gap when the athlete's sensors sent nothing for
    /// ``gapThreshold`` (a strap that dropped out and came back); the workout itself carries on.
    private func watchGaps(_ readings: [DaemonReading], of current: Current) async {
        let id = current.workoutID
        guard let first = readings.first?.reading.receivedDate, let last = readings.last?.reading.receivedDate,
            var watch = watches[id]
        else { return }
        let since = watch.lastReading
        watch.lastReading = max(last, since ?? last)
        watches[id] = watch
        guard let since, first.timeIntervalSince(since) >= Self.gapThreshold else { return }
        await markGap(from: since, to: first, in: current)
    }

    /// A marker event over a time the athlete's sensors sent nothing.
    func markGap(from start: Date, to end: Date, in current: Current) async {
        let reason = "no readings from \(current.athlete ?? "the athlete")'s sensor in this interval"
        do {
            try await current.builder.addWorkoutEvents([
                WorkoutEvent(type: .marker, start: start, end: end, metadata: [Self.gapKey: .string(reason)])
            ])
        } catch {
            logger.warning("a gap in \(current.athlete ?? "a")'s readings could not be recorded: \(error)")
        }
    }

    /// A reading as WorkoutKit takes it: its usable heart rate (none without skin contact, never 0 bpm).
    package static func measurement(_ reading: HeartRateReading) -> SensorMeasurement {
        let m = reading.measurement
        return SensorMeasurement(
            date: reading.receivedDate,
            heartRate: m.usableHeartRate.map(Double.init),
            beats: reading.beats.enumerated().map { index, beat in
                SensorMeasurement.Beat(
                    date: beat.date,
                    rrTicks: beat.interval.ticks,
                    precededByGap: index == 0 && !reading.isContinuous
                )
            },
            activeEnergy: reading.energy.map {
                SensorMeasurement.ActiveEnergy(kilojoules: $0.kilojoules, since: $0.since)
            }
        )
    }

    package static func device(_ reading: DaemonReading) -> Device {
        Device(
            name: reading.name,
            address: reading.reading.sensor.description,
            manufacturer: reading.manufacturer,
            bodyLocation: reading.bodyLocation
        )
    }

    // MARK: State

    /// Every workout in progress, in the order they started.
    package var snapshots: [WorkoutSnapshot] {
        get async {
            var all: [WorkoutSnapshot] = []
            for current in workouts { all.append(await snapshot(of: current)) }
            return all
        }
    }

    func snapshot(of current: Current) async -> WorkoutSnapshot {
        let builder = current.builder
        let state = await current.session.state
        return WorkoutSnapshot(
            state: current.collecting || state != .running ? state : .prepared,
            workoutID: builder.workoutID,
            activity: current.session.configuration.activityType,
            location: current.session.configuration.locationType,
            startDate: await builder.startDate,
            elapsed: await builder.elapsedTime(at: clock.now()),
            heartRate: await builder.statistics(for: .heartRate),
            storeError: storeRefusal,
            athlete: current.athlete,
            teamSessionID: current.teamSessionID
        )
    }

    /// The first workout as it is now, without a hop to the workout's thread: as of its last change or batch of
    /// readings, with the elapsed time carried on to now while it runs. What announcers and timers read once a
    /// second.
    package nonisolated var currentSnapshot: WorkoutSnapshot {
        currentSnapshots.first ?? .idle
    }

    /// Every workout in progress as it is now (see ``currentSnapshot``).
    package nonisolated var currentSnapshots: [WorkoutSnapshot] {
        let (snapshots, at) = published.withLock { ($0.snapshots, $0.at) }
        let passed = max(0, clock.now().timeIntervalSince(at))
        return snapshots.map { snapshot in
            guard snapshot.state == .running else { return snapshot }
            var now = snapshot
            now.elapsed += passed
            return now
        }
    }

    /// The latest reading from any sensor, without a hop to the workout's thread.
    package nonisolated var currentLatestReading: DaemonReading? { published.withLock { $0.latest } }

    /// Keeps ``currentSnapshots`` as the workouts are now.
    private func publish(_ snapshots: [WorkoutSnapshot]) {
        let now = clock.now()
        let latest = latest
        published.withLock { $0 = Published(snapshots: snapshots, at: now, latest: latest) }
    }

    private func publishAll() async {
        publish(await snapshots)
    }

    /// A change of a workout's state: ``currentSnapshot`` first, then ``changes``.
    package func announce() async {
        await publishAll()
        changes.publish(())
        // ECG streams while any workout is in progress (from its countdown, so it runs when collection begins).
        if measuringWaveforms != !workouts.isEmpty {
            measuringWaveforms = !workouts.isEmpty
            measureWaveforms(measuringWaveforms)
        }
    }
}
