import Foundation

/// What a ``LiveWorkoutBuilder`` reports as it collects, so a UI or log updates without polling.
public enum LiveWorkoutBuilderEvent: Hashable, Sendable {
    /// New samples of these types were collected (statistics changed).
    case collectedData(Set<SampleType>)
    /// A workout event was collected (pause, resume, lap, marker, segment).
    case collectedEvent(WorkoutEvent)
}

/// Why a builder refused a call. Nothing changed.
public enum LiveWorkoutBuilderError: Error, Hashable, Sendable, CustomStringConvertible {
    case notCollecting
    case alreadyCollecting
    case collectionEnded
    case collectionNotEnded
    case finished
    case overlappingLap(start: Date)
    case invalidInterval(start: Date, end: Date)

    public var description: String {
        switch self {
        case .notCollecting: "the builder is not collecting: call beginCollection(at:) first"
        case .alreadyCollecting: "collection has already begun"
        case .collectionEnded: "collection has ended: nothing more can be added"
        case .collectionNotEnded: "end collection (endCollection(at:)) before finishing the workout"
        case .finished: "the workout was already finished or discarded"
        case .overlappingLap(let start): "a lap starting at \(start) overlaps the previous lap: laps never overlap"
        case .invalidInterval(let start, let end): "an event cannot end (\(end)) before it starts (\(start))"
        }
    }
}

/// Builds a workout while it happens (HealthKit's HKLiveWorkoutBuilder): collects samples (stored as they
/// arrive), events and metadata, keeps statistics current (discrete: average/min/max/most recent; cumulative:
/// sum; samples during pauses are stored but left out), and saves the workout at the end.
public actor LiveWorkoutBuilder {
    /// The identifier the finished workout will have; samples are stored under it as they arrive.
    public nonisolated let workoutID: UUID
    public nonisolated let configuration: WorkoutConfiguration
    /// Builder events; iterate from one task.
    public nonisolated let events: AsyncStream<LiveWorkoutBuilderEvent>
    private let continuation: AsyncStream<LiveWorkoutBuilderEvent>.Continuation
    /// Where samples go as they arrive, and where statistics are recomputed from when a pause or the end is set
    /// before samples already collected. Without a store given, one in memory.
    let store: any HealthStore

    public private(set) var startDate: Date?
    public private(set) var endDate: Date?
    public private(set) var workoutEvents: [WorkoutEvent] = []
    public private(set) var metadata: [String: MetadataValue] = [:]
    public private(set) var activities: [WorkoutActivity] = []
    private var finished = false
    private var statisticsByType: [String: Statistics] = [:]
    /// The latest start of a quantity sample collected so far (counted or not). Pauses and an end set after it
    /// change nothing collected, so the statistics stay as they are; one set at or before it means recomputing
    /// them from the store. Readings are not kept here: a hundred sensors collect 24 000 a minute.
    private var latestSampleStart: Date?
    /// The recomputation under way, and whether another was asked for since it began. While one runs, `add`
    /// waits before saving, and it reads the store only once no save is under way: so every sample counts once,
    /// either in what the store returns or added after it.
    private var recomputation: Task<Void, Never>?
    private var recomputationRequested = false
    /// Saves under way in `add`, and what waits for there to be none.
    private var savesUnderWay = 0
    private var savesSettledWaiters: [CheckedContinuation<Void, Never>] = []
    /// Why the last recomputation failed, while its statistics are out of date; finishing tries once more.
    private var recomputationError: (any Error)?
    private var devices: [Device] = []
    /// Where each device with an address is in `devices`: every sample asks, and searching the list cost a
    /// comparison per sensor per sample (a tenth of a workout's work with a hundred sensors).
    private var deviceIndex: [String: Int] = [:]
    /// Called after every change that must survive a crash (set by the session).
    var journal: (@Sendable () async -> Void)?

    struct Collected: Hashable, Sendable {
        var value: Double
        var count: Int
        var start: Date
        var end: Date

        /// The sample in its type's canonical unit; nil when it cannot be converted.
        init?(_ sample: QuantitySample) {
            guard let value = try? sample.quantity.doubleValue(for: sample.type.canonicalUnit) else { return nil }
            self.value = value
            count = sample.count
            start = sample.startDate
            end = sample.endDate
        }
    }

    init(workoutID: UUID = UUID(), configuration: WorkoutConfiguration, store: (any HealthStore)?) {
        self.workoutID = workoutID
        self.configuration = configuration
        self.store = store ?? InMemoryHealthStore()
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1024))
    }

    func setJournal(_ journal: @escaping @Sendable () async -> Void) { self.journal = journal }

    // MARK: Collecting

    /// Starts collecting at `date` (the workout's start date).
    public func beginCollection(at date: Date) async throws(LiveWorkoutBuilderError) {
        guard !finished else { throw .finished }
        guard startDate == nil else { throw .alreadyCollecting }
        startDate = date
        await journal?()
    }

    /// Stores samples and adds quantity samples to the statistics (unless they fall in a pause).
    public func add(_ samples: [Sample]) async throws {
        guard !finished else { throw LiveWorkoutBuilderError.finished }
        guard startDate != nil else { throw LiveWorkoutBuilderError.notCollecting }
        guard endDate == nil else { throw LiveWorkoutBuilderError.collectionEnded }
        guard !samples.isEmpty else { return }
        while let running = recomputation { await running.value }
        savesUnderWay += 1
        defer {
            savesUnderWay -= 1
            if savesUnderWay == 0 {
                for waiter in savesSettledWaiters { waiter.resume() }
                savesSettledWaiters = []
            }
        }
        try await store.save(samples, workoutID: workoutID)
        var types = Set<SampleType>()
        for sample in samples {
            types.insert(sample.sampleType)
            switch sample {
            case .quantity(let quantity):
                include(device: quantity.device)
                guard let collected = Collected(quantity) else { continue }
                latestSampleStart = max(latestSampleStart ?? collected.start, collected.start)
                if counts(collected.start) { accumulate(collected, of: quantity.type) }
            case .heartbeatSeries(let series):
                include(device: series.device)
            case .waveform(let waveform):
                include(device: waveform.device)
            }
        }
        continuation.yield(.collectedData(types))
    }

    /// Records the device a sample came from. A sensor is one device per address, whatever name bluetoothd
    /// shows at the moment (it changes from the advertised name to the GAP name once connected): the latest
    /// description replaces the earlier one.
    private func include(device: Device?) {
        guard let device else { return }
        if let address = device.address {
            if let index = deviceIndex[address] {
                devices[index] = device
            } else {
                deviceIndex[address] = devices.count
                devices.append(device)
            }
        } else if !devices.contains(device) {
            // Without an address there is nothing to index by (rare: a sample added by hand).
            devices.append(device)
        }
    }

    /// Adds events: laps (which never overlap), markers, segments (which may), pause and resume.
    public func addWorkoutEvents(_ events: [WorkoutEvent]) async throws(LiveWorkoutBuilderError) {
        guard !finished else { throw .finished }
        guard startDate != nil else { throw .notCollecting }
        var laps = workoutEvents.filter { $0.type == .lap }
        for event in events {
            guard event.endDate >= event.startDate else {
                throw .invalidInterval(start: event.startDate, end: event.endDate)
            }
            if event.type == .lap {
                if laps.contains(where: { event.startDate < $0.endDate && $0.startDate < event.endDate }) {
                    throw .overlappingLap(start: event.startDate)
                }
                laps.append(event)
            }
        }
        workoutEvents += events
        workoutEvents.sort { $0.startDate < $1.startDate }
        // Whether a sample counts depends only on the pauses and resumes at or before its start.
        let earliestChange = events.filter { $0.type == .pause || $0.type == .resume }.map(\.startDate).min()
        if let earliestChange, let latestSampleStart, earliestChange <= latestSampleStart {
            await recomputeStatistics()
        }
        for event in events { continuation.yield(.collectedEvent(event)) }
        await journal?()
    }

    /// Adds (or replaces) metadata of the workout.
    public func addMetadata(_ metadata: [String: MetadataValue]) async throws(LiveWorkoutBuilderError) {
        guard !finished else { throw .finished }
        self.metadata.merge(metadata) { _, new in new }
        await journal?()
    }

    func record(activity: WorkoutActivity) async {
        activities.removeAll { $0.id == activity.id }
        activities.append(activity)
        await journal?()
    }

    /// Ends collection at `date` (the workout's end date).
    public func endCollection(at date: Date) async throws(LiveWorkoutBuilderError) {
        guard !finished else { throw .finished }
        guard startDate != nil else { throw .notCollecting }
        guard endDate == nil else { throw .collectionEnded }
        endDate = date
        if let latestSampleStart, date <= latestSampleStart { await recomputeStatistics() }
        await journal?()
    }

    /// Saves and returns the workout. Collection must have ended.
    public func finishWorkout() async throws -> Workout {
        guard !finished else { throw LiveWorkoutBuilderError.finished }
        guard let startDate, let endDate else { throw LiveWorkoutBuilderError.collectionNotEnded }
        if recomputationError != nil {
            await recomputeStatistics()
            if let recomputationError { throw recomputationError }
        }
        let workout = Workout(
            id: workoutID,
            configuration: configuration,
            startDate: startDate,
            endDate: endDate,
            duration: elapsedTime(at: endDate),
            events: workoutEvents,
            activities: activities,
            metadata: metadata,
            statistics: statisticsByType,
            devices: devices
        )
        try await store.saveFinished(workout)
        finished = true
        continuation.finish()
        await journal?()
        return workout
    }

    /// Drops the workout and the samples collected for it.
    public func discardWorkout() async throws {
        guard !finished else { throw LiveWorkoutBuilderError.finished }
        try await store.deleteSamples(ofWorkout: workoutID)
        finished = true
        continuation.finish()
        await journal?()
    }

    public var isFinished: Bool { finished }

    /// The sensors that contributed samples so far (the finished workout's `devices`).
    public var collectedDevices: [Device] { devices }

    // MARK: Statistics and time

    /// Statistics of one quantity type over the workout so far, samples during pauses excluded.
    public func statistics(for type: QuantityType) -> Statistics? {
        statisticsByType[type.identifier]
    }

    /// Time worked out between the start and `date` (or the end, if earlier), pauses excluded.
    public func elapsedTime(at date: Date) -> Double {
        guard let startDate else { return 0 }
        let end = min(date, endDate ?? date)
        guard end > startDate else { return 0 }
        let paused = pauseIntervals(until: end).reduce(0.0) { total, interval in
            let from = max(interval.start, startDate)
            let to = min(interval.end, end)
            return total + max(0, to.timeIntervalSince(from))
        }
        return end.timeIntervalSince(startDate) - paused
    }

    /// Pause → resume intervals (an unfinished pause runs to `until`).
    private func pauseIntervals(until: Date) -> [(start: Date, end: Date)] {
        var intervals: [(start: Date, end: Date)] = []
        var pausedAt: Date?
        for event in workoutEvents {
            switch event.type {
            case .pause where pausedAt == nil: pausedAt = event.startDate
            case .resume:
                if let start = pausedAt { intervals.append((start, event.startDate)) }
                pausedAt = nil
            default: continue
            }
        }
        if let pausedAt { intervals.append((pausedAt, max(until, pausedAt))) }
        return intervals
    }

    /// Whether a sample starting at `date` counts toward the workout's statistics.
    private func counts(_ date: Date) -> Bool {
        guard let startDate, date >= startDate else { return false }
        if let endDate, date >= endDate { return false }
        return !pauseIntervals(until: .distantFuture).contains { date >= $0.start && date < $0.end }
    }

    private func accumulate(_ collected: Collected, of type: QuantityType) {
        let key = type.identifier
        var statistics =
            statisticsByType[key]
            ?? Statistics(quantityType: type, startDate: startDate ?? collected.start, endDate: collected.end)
        statistics.add(collected.value, count: collected.count, start: collected.start, end: collected.end)
        statistics.endDate = max(statistics.endDate, collected.end)
        statisticsByType[key] = statistics
    }

    /// Recomputes the statistics from the workout's samples in the store, after the pauses or the end changed
    /// which of them count. Returns once a recomputation that began after the call has ended.
    private func recomputeStatistics() async {
        recomputationRequested = true
        while recomputationRequested || recomputation != nil {
            if let running = recomputation {
                await running.value
                continue
            }
            recomputationRequested = false
            recomputation = Task {
                // Saves that began before this one was asked for end first (later ones wait for it): the store
                // then has every sample the statistics counted, and none is counted twice.
                await self.savesSettled()
                do {
                    self.finishRecomputation(.success(try await self.store.samples(ofWorkout: self.workoutID)))
                } catch {
                    self.finishRecomputation(.failure(error))
                }
            }
        }
    }

    private func savesSettled() async {
        guard savesUnderWay > 0 else { return }
        await withCheckedContinuation { savesSettledWaiters.append($0) }
    }

    private func finishRecomputation(_ result: Result<[Sample], any Error>) {
        defer { recomputation = nil }
        switch result {
        case .failure(let error):
            recomputationError = error
        case .success(let samples):
            recomputationError = nil
            statisticsByType = [:]
            for case .quantity(let quantity) in samples {
                guard let collected = Collected(quantity), counts(collected.start) else { continue }
                accumulate(collected, of: quantity.type)
            }
        }
    }

    // MARK: Recovery

    func restore(from journal: WorkoutJournal, samples: [Sample]) {
        startDate = journal.collectionStartDate
        endDate = journal.collectionEndDate
        workoutEvents = journal.events
        metadata = journal.metadata
        activities = journal.activities + (journal.currentActivity.map { [$0] } ?? [])
        for case .quantity(let quantity) in samples {
            include(device: quantity.device)
            guard let collected = Collected(quantity) else { continue }
            latestSampleStart = max(latestSampleStart ?? collected.start, collected.start)
            if counts(collected.start) { accumulate(collected, of: quantity.type) }
        }
    }
}
