import BlueZ
import ControlAPI
import Foundation
import HealthStore
import HeartRateProfile
import Logging
import Synchronization
import WorkoutAnalysis
import WorkoutKit

/// Why a workout command was refused; each becomes its own D-Bus error name (``ControlAPI/ErrorName``).
public struct WorkoutCommandError: Error, Equatable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// A workout is already ongoing (HealthKit's intent response "failure: ongoing workout").
        case ongoingWorkout
        case noWorkout
        /// The session cannot make that change from its state (pause while paused, …).
        case invalidState
        case invalidArguments
        /// The store failed (a full disk, say).
        case store

        /// The D-Bus error name the control API replies with.
        public var errorName: String {
            switch self {
            case .ongoingWorkout: ControlAPI.ErrorName.ongoingWorkout
            case .noWorkout: ControlAPI.ErrorName.noWorkout
            case .invalidState: ControlAPI.ErrorName.invalidState
            case .invalidArguments: ControlAPI.ErrorName.invalidArguments
            case .store: ControlAPI.ErrorName.store
            }
        }
    }

    public var kind: Kind
    public var message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// The workout in progress and how it got there, for the control API, the live log and the systemd status.
public struct WorkoutSnapshot: Sendable, Equatable {
    public var state: WorkoutSessionState
    public var workoutID: UUID?
    public var activity: WorkoutActivityType?
    public var location: WorkoutSessionLocationType?
    public var startDate: Date?
    /// Seconds worked out, pauses excluded.
    public var elapsed: Double
    public var heartRate: Statistics?
    /// Why the store refuses the workout's readings (a full disk, say), while it does: they are kept in memory
    /// and saved once it takes them again.
    public var storeError: String?

    static let idle = WorkoutSnapshot(state: .notStarted, elapsed: 0)

    /// The session's state, or `idle` when there is no workout.
    public var stateName: String { workoutID == nil ? "idle" : "\(state)" }
}

/// Runs the workout: one `WorkoutSession` with its `LiveWorkoutBuilder` and `LiveWorkoutDataSource` at a time,
/// fed batch by batch by ``IngestPipeline`` (``record(_:)``), which first has it recover a workout the daemon was
/// running when it stopped (``recover()``).
actor WorkoutManager {
    private struct Current {
        var session: WorkoutSession
        var builder: LiveWorkoutBuilder
        var source: LiveWorkoutDataSource
        /// The data source feeds the builder. Starting sets the session running a moment before this (a few
        /// awaits): until then the workout still shows as prepared, so no reading it did not store shows as
        /// running.
        var collecting: Bool
    }

    private let store: any HealthStore
    /// Every reading of the daemon's sensors, as the sensor manager publishes them: a starting workout watches
    /// them for its first heart rate (the workout itself is fed by ``record(_:)``).
    private let readings: Broadcast<DaemonReading>
    /// The sensors as they are now (their battery levels go into a finished workout).
    private let sensorStatuses: @Sendable () -> [SensorStatus]
    private let sampleTypes: Set<SampleType>
    private let clock: any WorkoutClock
    /// For the energy estimate stored with a workout whose sensors measured none.
    private let profile: AthleteProfile
    private var current: Current?
    private var latest: DaemonReading?
    /// Fires whenever the workout's state changes (not on every sample), once ``currentSnapshot`` shows the change.
    nonisolated let changes = Broadcast<Void>()
    /// The workout as of its last change or batch of readings, and the latest reading: read from any thread without
    /// waking the workout's.
    private nonisolated let published = Mutex<Published>(Published())

    private struct Published {
        var snapshot = WorkoutSnapshot.idle
        var at = Date.distantPast
        var latest: DaemonReading?
    }
    /// The workout's sensors' skin contact: when it was lost, and who reports it.
    private var contact = ContactWatch()
    /// Why the store last refused readings, while it still does: logged once when it starts, not per reading.
    private var storeRefusal: String?

    private let logger: Logger

    init(
        store: any HealthStore,
        readings: Broadcast<DaemonReading>,
        sensorStatuses: @escaping @Sendable () -> [SensorStatus],
        sampleTypes: Set<SampleType>,
        clock: any WorkoutClock,
        profile: AthleteProfile = AthleteProfile(),
        logger: Logger
    ) {
        self.logger = logger
        self.profile = profile
        self.store = store
        self.readings = readings
        self.sensorStatuses = sensorStatuses
        self.sampleTypes = sampleTypes
        self.clock = clock
    }

    /// Commits everything collected so far; the workout stays journaled, so the next start recovers it.
    func flush() async {
        try? await store.flush()
    }

    /// Brings back the workout that was in progress when the daemon stopped, and carries on collecting. The time
    /// the daemon was down has no samples; a marker event records it.
    func recover() async throws {
        guard let session = try await WorkoutSession.recoverActiveWorkoutSession(store: store, clock: clock) else {
            return
        }
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
        current = Current(session: session, builder: builder, source: source, collecting: true)
        contact = ContactWatch()
        await announce()
    }

    /// The metadata key of the marker event that records a time the daemon was down during a workout.
    static let gapKey = "systole.gap"

    /// Records a batch of readings (the workout stage of ``IngestPipeline``): during a workout their samples are
    /// committed to the store before this returns, so whatever is shown of them survives a crash. Returns each
    /// reading with the workout as it was when the reading was recorded.
    func record(_ readings: [DaemonReading]) async -> [RecordedReading] {
        latest = readings.last
        guard let current else {
            storeRefusal = nil
            publish(.idle)
            return readings.map { RecordedReading(reading: $0, workout: .idle) }
        }
        let arrival = await snapshot
        let stored = await current.source.receive(readings.map { (Self.measurement($0.reading), Self.device($0)) })
        let now = await snapshot
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
        if recording { await watchContact(readings, builder: current.builder) }
        var published = now
        published.storeError = storeRefusal
        publish(published)
        // A line says "running" or "paused" only for a reading the workout stored. One that arrived during the
        // countdown, or as the workout ended, is logged with the state it arrived in.
        let shown = stored || !recording ? now : arrival
        return readings.map { RecordedReading(reading: $0, workout: shown) }
    }

    /// Records each loss of skin contact that ended with these readings as an event of the workout.
    private func watchContact(_ readings: [DaemonReading], builder: LiveWorkoutBuilder) async {
        var ended: [WorkoutEvent] = []
        let dropped = contact.dropped
        for reading in readings {
            if let event = contact.observe(
                address: reading.reading.sensor.description,
                contact: reading.reading.measurement.sensorContact,
                at: reading.reading.receivedDate
            ) {
                ended.append(event)
            }
        }
        if dropped == 0, contact.dropped > 0 {
            logger.warning(
                "a sensor lost contact \(ContactWatch.maximumEvents) times in this workout; later losses are not kept"
            )
        }
        guard !ended.isEmpty else { return }
        do {
            try await builder.addWorkoutEvents(ended)
        } catch {
            logger.warning("a loss of contact could not be recorded: \(error)")
        }
    }

    /// A reading as WorkoutKit takes it. A sensor without skin contact has no heart rate: nil, never 0 bpm.
    static func measurement(_ reading: HeartRateReading) -> SensorMeasurement {
        let m = reading.measurement
        let hasHeartRate = m.sensorContact != .notDetected && m.heartRate > 0
        return SensorMeasurement(
            date: reading.receivedDate,
            heartRate: hasHeartRate ? Double(m.heartRate) : nil,
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

    static func device(_ reading: DaemonReading) -> Device {
        Device(
            name: reading.name,
            address: reading.reading.sensor.description,
            manufacturer: reading.manufacturer,
            bodyLocation: reading.bodyLocation
        )
    }

    // MARK: Commands

    /// Prepares (waits up to `prepareTimeout` for a heart rate), starts the activity and begins collection.
    /// Returns the workout's identifier and whether heart rate was available when it started.
    func start(
        _ configuration: WorkoutConfiguration,
        prepareTimeout: Duration = .seconds(3)
    ) async throws(WorkoutCommandError) -> (UUID, heartRateAvailable: Bool) {
        if let current {
            let state = await current.session.state
            throw WorkoutCommandError(
                .ongoingWorkout,
                "a workout is already ongoing (\(state)); end it with 'systole end' or drop it with 'systole cancel'"
            )
        }
        let session = await WorkoutSession(configuration: configuration, store: store, clock: clock)
        let builder = session.associatedWorkoutBuilder()
        let source = LiveWorkoutDataSource(configuration: configuration, enabledTypes: sampleTypes)
        // Claimed before waiting, so a second start during the countdown is refused too.
        current = Current(session: session, builder: builder, source: source, collecting: false)
        contact = ContactWatch()
        let readings = readings.subscribe(buffering: 8)
        do {
            try await session.prepare()
            await announce()
            let available = await heartRateArrives(readings, within: prepareTimeout)
            let start = clock.now()
            try await session.startActivity(at: start)
            try await builder.beginCollection(at: start)
            await source.attach(to: builder)
            current?.collecting = true
            await announce()
            return (builder.workoutID, available)
        } catch {
            self.current = nil
            try? await session.end()
            await announce()
            throw WorkoutCommandError(.invalidState, "the workout could not start: \(error)")
        }
    }

    /// Whether a reading with a heart rate is recent or arrives within `timeout`.
    private func heartRateArrives(_ readings: AsyncStream<DaemonReading>, within timeout: Duration) async -> Bool {
        if let latest, Self.measurement(latest.reading).heartRate != nil,
            clock.now().timeIntervalSince(latest.reading.receivedDate) < 2
        {
            return true
        }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await reading in readings where Self.measurement(reading.reading).heartRate != nil {
                    return true
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    func pause() async throws(WorkoutCommandError) {
        let current = try ongoing()
        do {
            try await current.session.pause()
        } catch {
            let state = await current.session.state
            throw WorkoutCommandError(
                .invalidState,
                state == .paused
                    ? "the workout is already paused; resume it with 'systole resume'"
                    : "only a running workout can be paused (this one is \(state))"
            )
        }
        await announce()
    }

    func resume() async throws(WorkoutCommandError) {
        let current = try ongoing()
        do {
            try await current.session.resume()
        } catch {
            let state = await current.session.state
            throw WorkoutCommandError(
                .invalidState,
                state == .running
                    ? "the workout is already running; pause it with 'systole pause'"
                    : "only a paused workout can be resumed (this one is \(state))"
            )
        }
        await announce()
    }

    /// Stops the activity, ends collection, saves the workout and ends the session.
    func end() async throws(WorkoutCommandError) -> Workout {
        let current = try ongoing()
        let date = clock.now()
        let workout: Workout
        do {
            if await current.session.state != .stopped { try await current.session.stopActivity(at: date) }
            // Readings a full disk refused are saved now if there is room again.
            await current.source.savePending()
            await current.source.stop()
            if await current.builder.endDate == nil { try await current.builder.endCollection(at: date) }
            let stillLost = contact.finish(at: date)
            if !stillLost.isEmpty { try await current.builder.addWorkoutEvents(stillLost) }
            try await current.builder.addMetadata(contact.metadata)
            try await closeLastLap(current.builder)
            try await current.builder.addMetadata(await endMetadata(current.builder))
            workout = try await current.builder.finishWorkout()
            try await current.session.end()
        } catch let error as HealthStoreError {
            throw WorkoutCommandError(.store, "the workout could not be saved: \(error)")
        } catch {
            throw WorkoutCommandError(.invalidState, "cannot end the workout: \(error)")
        }
        self.current = nil
        await announce()
        return workout
    }

    /// Drops the workout and its samples and ends the session.
    func cancel() async throws(WorkoutCommandError) {
        let current = try ongoing()
        do {
            await current.source.stop()
            try await current.builder.discardWorkout()
            try await current.session.end()
        } catch {
            throw WorkoutCommandError(.invalidState, "cannot cancel the workout: \(error)")
        }
        self.current = nil
        await announce()
    }

    /// A sample the user adds (water drunk, say), dated now.
    func addSample(type: QuantityType, quantity: Quantity) async throws(WorkoutCommandError) {
        let current = try ongoing()
        guard let limit = UserSampleLimit.limit(for: type) else {
            throw WorkoutCommandError(
                .invalidArguments,
                "\(type.identifier) comes from sensors and cannot be added by hand; known: "
                    + QuantityType.known.filter { UserSampleLimit.limit(for: $0) != nil }.map(\.identifier).joined(
                        separator: ", "
                    )
            )
        }
        let value: Double
        do {
            value = try quantity.doubleValue(for: limit.unit)
        } catch {
            throw WorkoutCommandError(.invalidArguments, "\(error)")
        }
        let total = await current.builder.statistics(for: type)?.sumQuantity()?.value ?? 0
        if let refusal = limit.refusal(of: value, total: total, type: type) {
            throw WorkoutCommandError(.invalidArguments, refusal)
        }
        let now = clock.now()
        do {
            // What the user adds is collected whenever the configuration enables its type.
            if await !current.source.typesToCollect.contains(.quantity(type)) {
                try await current.source.enableCollection(for: .quantity(type))
            }
            try await current.source.addUserSample(
                QuantitySample(type: type, quantity: quantity, start: now, end: now)
            )
        } catch {
            throw WorkoutCommandError(.invalidArguments, "\(error)")
        }
        await announce()
    }

    /// Ends the current lap now and starts the next (`systole lap`); returns the lap's number.
    func lap() async throws(WorkoutCommandError) -> Int {
        let current = try ongoing()
        let builder = current.builder
        guard let start = await builder.startDate, await builder.endDate == nil else {
            throw WorkoutCommandError(
                .invalidState,
                "the workout has not started collecting yet; try again in a moment"
            )
        }
        let laps = await builder.workoutEvents.filter { $0.type == .lap }
        // Each event is journaled with the workout on every change: a caller looping on lap must not grow it
        // without end.
        guard laps.count < MarkerText.maximumPerWorkout else {
            throw WorkoutCommandError(
                .invalidArguments,
                "this workout has \(laps.count) laps, the most one may have; end it and start another"
            )
        }
        let lapStart = laps.map(\.endDate).max() ?? start
        let now = max(clock.now(), lapStart)
        do {
            try await builder.addWorkoutEvents([WorkoutEvent(type: .lap, start: lapStart, end: now)])
        } catch {
            throw WorkoutCommandError(.invalidState, "cannot add a lap: \(error)")
        }
        await announce()
        return laps.count + 1
    }

    /// Sets a marker with `text` now (`systole marker TEXT`).
    func marker(_ text: String) async throws(WorkoutCommandError) {
        let current = try ongoing()
        if let refusal = MarkerText.refusal(of: text) { throw WorkoutCommandError(.invalidArguments, refusal) }
        let builder = current.builder
        guard await builder.startDate != nil, await builder.endDate == nil else {
            throw WorkoutCommandError(
                .invalidState,
                "the workout has not started collecting yet; try again in a moment"
            )
        }
        let markers = await builder.workoutEvents.filter { $0.metadata[MarkerText.key] != nil }.count
        guard markers < MarkerText.maximumPerWorkout else {
            throw WorkoutCommandError(
                .invalidArguments,
                "this workout has \(markers) markers, the most one may have; end it and start another"
            )
        }
        do {
            try await builder.addWorkoutEvents([
                WorkoutEvent(type: .marker, start: clock.now(), metadata: [MarkerText.key: .string(text)])
            ])
        } catch {
            throw WorkoutCommandError(.invalidState, "cannot add a marker: \(error)")
        }
        await announce()
    }

    /// With laps taken, the last one runs from the last lap's end to the workout's end (as a watch closes it when
    /// the workout stops), so the laps cover the workout.
    private func closeLastLap(_ builder: LiveWorkoutBuilder) async throws {
        let laps = await builder.workoutEvents.filter { $0.type == .lap }
        guard let last = laps.map(\.endDate).max(), let end = await builder.endDate, end > last else { return }
        try await builder.addWorkoutEvents([WorkoutEvent(type: .lap, start: last, end: end)])
    }

    /// What a finished workout keeps beside its samples: each sensor's battery level as it ended, and, when no
    /// sensor measured energy, the estimate from heart rate (kept apart from measured energy, and marked so).
    private func endMetadata(_ builder: LiveWorkoutBuilder) async -> [String: MetadataValue] {
        var metadata: [String: MetadataValue] = [:]
        let devices = Set(await builder.collectedDevices.compactMap(\.address))
        for status in sensorStatuses() {
            guard let address = status.address, devices.contains(address), let battery = status.batteryPercent else {
                continue
            }
            metadata[ActivityRecording.batteryKey(address)] = .number(Double(battery))
        }
        let measured = await builder.statistics(for: .activeEnergyBurned)?.sumQuantity()?.value ?? 0
        guard measured == 0, EnergyEstimate.unavailableReason(profile) == nil, let start = await builder.startDate,
            let end = await builder.endDate
        else { return metadata }
        let workout = Workout(
            id: builder.workoutID,
            configuration: builder.configuration,
            startDate: start,
            endDate: end,
            duration: 0,
            events: await builder.workoutEvents,
            activities: [],
            metadata: [:],
            statistics: [:],
            devices: []
        )
        // Best effort: a workout ends even when its samples cannot be read back for the estimate.
        guard let samples = try? await store.samples(ofWorkout: builder.workoutID) else {
            logger.warning("no energy estimate for workout \(builder.workoutID): its samples could not be read")
            return metadata
        }
        let recording = ActivityRecording(workout: workout, samples: samples)
        if let kilojoules = EnergyEstimate.kilojoules(recording, profile: profile) {
            metadata[ActivityRecording.estimatedEnergyKey] = .number((kilojoules * 10).rounded() / 10)
        }
        return metadata
    }

    private func ongoing() throws(WorkoutCommandError) -> Current {
        guard let current else {
            throw WorkoutCommandError(.noWorkout, "no workout is ongoing; start one with 'systole start'")
        }
        return current
    }

    // MARK: State

    var snapshot: WorkoutSnapshot {
        get async {
            guard let current else { return .idle }
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
                storeError: storeRefusal
            )
        }
    }

    /// The workout as it is now, without a hop to the workout's thread: as of its last change or batch of readings,
    /// with the elapsed time carried on to now while it runs. What announcers and timers read once a second.
    nonisolated var currentSnapshot: WorkoutSnapshot {
        let (snapshot, at) = published.withLock { ($0.snapshot, $0.at) }
        guard snapshot.state == .running else { return snapshot }
        var now = snapshot
        now.elapsed += max(0, clock.now().timeIntervalSince(at))
        return now
    }

    /// The latest reading from any sensor, without a hop to the workout's thread.
    nonisolated var currentLatestReading: DaemonReading? { published.withLock { $0.latest } }

    /// Keeps ``currentSnapshot`` as the workout is now.
    private func publish(_ snapshot: WorkoutSnapshot) {
        let now = clock.now()
        let latest = latest
        published.withLock { $0 = Published(snapshot: snapshot, at: now, latest: latest) }
    }

    /// A change of the workout's state: ``currentSnapshot`` first, then ``changes``.
    private func announce() async {
        publish(await snapshot)
        changes.publish(())
    }
}
