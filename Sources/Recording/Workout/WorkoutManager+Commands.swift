import Foundation
import SQLiteStore
import WorkoutAnalysis
import WorkoutKit

/// The workout commands (`systole start`, `start --team`, `pause`, …). A team session's commands act on every
/// athlete's workout at once.
extension WorkoutManager {
    /// Prepares (waits up to `prepareTimeout` for a heart rate), starts the activity and begins collection of one
    /// workout fed by every sensor. Returns the workout's identifier and whether heart rate was available when it
    /// started.
    package func start(
        _ configuration: WorkoutConfiguration,
        prepareTimeout: Duration = .seconds(3)
    ) async throws(WorkoutCommandError) -> (UUID, heartRateAvailable: Bool) {
        try await refuseIfOngoing()
        // The workout is an athlete's only when every connected sensor is hers (then it takes only her sensors'
        // readings); with a sensor of no athlete or of another, it is nobody's and takes every reading.
        let owners = Set(sensorStatuses().filter(\.isConnected).map(\.athlete))
        let athlete = owners.count == 1 ? owners.first ?? nil : nil
        let started = try await begin([athlete], teamSessionID: nil, configuration, prepareTimeout: prepareTimeout)
        return (started.ids[0], started.heartRateAvailable)
    }

    /// Starts one workout per athlete whose sensor is connected, all at the same moment, under one team session
    /// (`teamSessionID`, or a new one: receivers in other rooms pass the same to join it). Returns the team
    /// session and each athlete's workout.
    package func startTeam(
        _ configuration: WorkoutConfiguration,
        teamSessionID: UUID?,
        prepareTimeout: Duration = .seconds(3)
    ) async throws(WorkoutCommandError) -> (teamSessionID: UUID, workouts: [(athlete: String, id: UUID)]) {
        try await refuseIfOngoing()
        let statuses = sensorStatuses()
        guard statuses.contains(where: { $0.athlete != nil }) else {
            throw WorkoutCommandError(
                .invalidArguments,
                "a team session needs athletes: name each sensor's athlete in the [athletes] table of systoled.toml "
                    + "(\"A0:9E:1A:12:34:56\" = \"Ana\") and restart systoled"
            )
        }
        let athletes = Set(statuses.filter(\.isConnected).compactMap(\.athlete)).sorted()
        guard !athletes.isEmpty else {
            throw WorkoutCommandError(
                .invalidState,
                "no athlete's sensor is connected; check 'systole sensors' and start again once they stream"
            )
        }
        let team = teamSessionID ?? UUID()
        let started = try await begin(athletes, teamSessionID: team, configuration, prepareTimeout: prepareTimeout)
        return (team, Array(zip(athletes, started.ids)).map { (athlete: $0.0, id: $0.1) })
    }

    private func refuseIfOngoing() async throws(WorkoutCommandError) {
        guard let current = workouts.first else { return }
        let state = await current.session.state
        throw WorkoutCommandError(
            .ongoingWorkout,
            "a workout is already ongoing (\(state)); end it with 'systole end' or drop it with 'systole cancel'"
        )
    }

    /// Prepares a workout per athlete (one for `[nil]`), waits for a heart rate, and starts them all at one date.
    private func begin(
        _ athletes: [String?],
        teamSessionID: UUID?,
        _ configuration: WorkoutConfiguration,
        prepareTimeout: Duration
    ) async throws(WorkoutCommandError) -> (ids: [UUID], heartRateAvailable: Bool) {
        var prepared: [Current] = []
        for athlete in athletes {
            let session = await WorkoutSession(configuration: configuration, store: store, clock: clock)
            prepared.append(
                Current(
                    session: session,
                    builder: session.associatedWorkoutBuilder(),
                    source: LiveWorkoutDataSource(configuration: configuration, enabledTypes: sampleTypes),
                    collecting: false,
                    athlete: athlete,
                    teamSessionID: teamSessionID
                )
            )
        }
        // Claimed before waiting, so a second start during the countdown is refused too.
        workouts = prepared
        for current in prepared { watches[current.workoutID] = Watch() }
        let readings = readings.subscribe(buffering: 8)
        do {
            for current in prepared {
                var metadata: [String: MetadataValue] = [:]
                if let athlete = current.athlete { metadata[ActivityRecording.athleteKey] = .string(athlete) }
                if let teamSessionID {
                    metadata[ActivityRecording.teamSessionKey] = .string(teamSessionID.uuidString)
                }
                if !metadata.isEmpty { try await current.builder.addMetadata(metadata) }
                try await current.session.prepare()
            }
            await announce()
            let available = await heartRateArrives(readings, within: prepareTimeout)
            let start = clock.now()
            for current in prepared {
                try await current.session.startActivity(at: start)
                try await current.builder.beginCollection(at: start)
                await current.source.attach(to: current.builder)
                watches[current.workoutID]?.lastReading = start
            }
            for index in workouts.indices { workouts[index].collecting = true }
            await announce()
            return (prepared.map(\.workoutID), available)
        } catch {
            workouts = []
            watches = [:]
            for current in prepared { try? await current.session.end() }
            await announce()
            throw WorkoutCommandError(.invalidState, "the workout could not start: \(error)")
        }
    }

    /// Whether a reading with a heart rate is recent or arrives within `timeout`.
    private func heartRateArrives(_ readings: AsyncStream<SensorReport>, within timeout: Duration) async -> Bool {
        if let latest, Self.measurement(latest.reading).heartRate != nil,
            clock.now().timeIntervalSince(latest.reading.receivedDate) < 2
        {
            return true
        }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await report in readings {
                    if let reading = report.heartRate, Self.measurement(reading.reading).heartRate != nil {
                        return true
                    }
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

    package func pause() async throws(WorkoutCommandError) {
        for current in try ongoing() {
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
        }
        await announce()
    }

    package func resume() async throws(WorkoutCommandError) {
        for current in try ongoing() {
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
        }
        await announce()
    }

    /// Stops the activity, ends collection, saves the workout and ends the session; a team session's every
    /// workout, at one date. Returns the saved workouts, in the order they started.
    package func end() async throws(WorkoutCommandError) -> [Workout] {
        let ongoing = try ongoing()
        let date = clock.now()
        var saved: [Workout] = []
        for current in ongoing {
            do {
                saved.append(try await end(current, at: date))
            } catch let error as HealthStoreError {
                throw WorkoutCommandError(.store, "the workout could not be saved: \(error)")
            } catch {
                throw WorkoutCommandError(.invalidState, "cannot end the workout: \(error)")
            }
            workouts.removeAll { $0.workoutID == current.workoutID }
            watches[current.workoutID] = nil
        }
        await announce()
        return saved
    }

    private func end(_ current: Current, at date: Date) async throws -> Workout {
        if await current.session.state != .stopped { try await current.session.stopActivity(at: date) }
        // Readings a full disk refused are saved now if there is room again.
        await current.source.savePending()
        if await current.builder.endDate == nil { try await current.builder.endCollection(at: date) }
        var watch = watches[current.workoutID] ?? Watch()
        if current.teamSessionID != nil, let last = watch.lastReading, date.timeIntervalSince(last) >= Self.gapThreshold
        {
            await markGap(from: last, to: date, in: current)
        }
        let stillLost = watch.contact.finish(at: date)
        watches[current.workoutID] = watch
        if !stillLost.isEmpty { try await current.builder.addWorkoutEvents(stillLost) }
        try await current.builder.addMetadata(watch.contact.metadata)
        try await closeLastLap(current.builder)
        try await current.builder.addMetadata(await endMetadata(current.builder))
        let workout = try await current.builder.finishWorkout()
        try await current.session.end()
        return workout
    }

    /// Drops the workouts and their samples and ends the sessions.
    package func cancel() async throws(WorkoutCommandError) {
        for current in try ongoing() {
            do {
                try await current.builder.discardWorkout()
                try await current.session.end()
            } catch {
                throw WorkoutCommandError(.invalidState, "cannot cancel the workout: \(error)")
            }
            workouts.removeAll { $0.workoutID == current.workoutID }
            watches[current.workoutID] = nil
        }
        await announce()
    }

    /// A sample the user adds (water drunk, say), dated now.
    package func addSample(type: QuantityType, quantity: Quantity) async throws(WorkoutCommandError) {
        let ongoing = try ongoing()
        guard ongoing.count == 1, let current = ongoing.first else {
            throw WorkoutCommandError(
                .invalidArguments,
                "a team session has a workout per athlete, and a sample would be nobody's: add it in a workout of "
                    + "one's own ('systole start' without --team)"
            )
        }
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

    /// Ends the current lap now and starts the next (`systole lap`), in every workout of a team session; returns
    /// the lap's number.
    package func lap() async throws(WorkoutCommandError) -> Int {
        let ongoing = try ongoing()
        let now = clock.now()
        var number = 0
        for current in ongoing {
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
            do {
                try await builder.addWorkoutEvents([WorkoutEvent(type: .lap, start: lapStart, end: max(now, lapStart))])
            } catch {
                throw WorkoutCommandError(.invalidState, "cannot add a lap: \(error)")
            }
            number = max(number, laps.count + 1)
        }
        await announce()
        return number
    }

    /// Sets a marker with `text` now (`systole marker TEXT`), in every workout of a team session.
    package func marker(_ text: String) async throws(WorkoutCommandError) {
        let ongoing = try ongoing()
        if let refusal = MarkerText.refusal(of: text) { throw WorkoutCommandError(.invalidArguments, refusal) }
        let now = clock.now()
        for current in ongoing {
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
                    WorkoutEvent(type: .marker, start: now, metadata: [MarkerText.key: .string(text)])
                ])
            } catch {
                throw WorkoutCommandError(.invalidState, "cannot add a marker: \(error)")
            }
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

    private func ongoing() throws(WorkoutCommandError) -> [Current] {
        guard !workouts.isEmpty else {
            throw WorkoutCommandError(.noWorkout, "no workout is ongoing; start one with 'systole start'")
        }
        return workouts
    }
}
