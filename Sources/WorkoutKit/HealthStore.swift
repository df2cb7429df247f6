import Foundation

/// Where the workout engine keeps what it collects. `SQLiteHealthStore` (module SQLiteStore) is the durable
/// default; ``InMemoryHealthStore`` serves tests, tools and a builder without a store.
public protocol HealthStore: Sendable {
    /// Saves samples as they arrive, linked to the workout collecting them (nil: not part of a workout).
    func save(_ samples: [Sample], workoutID: UUID?) async throws
    /// Saves a workout made elsewhere (a copy, a test) without samples; the daily activity summary is not touched.
    func save(_ workout: Workout) async throws
    /// Saves a workout the builder finished, and adds it to its day's activity summary (in one transaction).
    func saveFinished(_ workout: Workout) async throws
    /// Deletes the samples collected for a workout that was discarded.
    func deleteSamples(ofWorkout id: UUID) async throws
    /// The samples of a workout, oldest first (used to rebuild the builder's statistics after a crash, or when a
    /// pause or the end is set before samples it already has).
    func samples(ofWorkout id: UUID) async throws -> [Sample]
    /// Records the state of a workout session in progress; replaces that session's previous record (sessions
    /// are told apart by `sessionID`: a team session runs one per athlete).
    func saveJournal(_ journal: WorkoutJournal) async throws
    /// The states of the sessions that were in progress, in the order they were first recorded.
    func loadJournals() async throws -> [WorkoutJournal]
    /// Forgets a session in progress (it ended or was discarded).
    func clearJournal(sessionID: UUID) async throws
    /// Returns once everything saved so far is durable and readable.
    func flush() async throws
}

extension HealthStore {
    /// A store that makes each save durable and readable before it returns has nothing to flush.
    public func flush() async throws {}

    /// The state of the first session that was in progress, if any.
    public func loadJournal() async throws -> WorkoutJournal? {
        try await loadJournals().first
    }
}

/// Everything needed to bring a workout in progress back after a crash: written on every change.
public struct WorkoutJournal: Hashable, Sendable, Codable {
    public var sessionID: UUID
    public var workoutID: UUID
    public var configuration: WorkoutConfiguration
    public var state: WorkoutSessionState
    public var startDate: Date?
    public var endDate: Date?
    public var lastDate: Date?
    public var currentActivity: WorkoutActivity?
    public var activities: [WorkoutActivity]
    public var collectionStartDate: Date?
    public var collectionEndDate: Date?
    public var events: [WorkoutEvent]
    public var metadata: [String: MetadataValue]

    public init(
        sessionID: UUID,
        workoutID: UUID,
        configuration: WorkoutConfiguration,
        state: WorkoutSessionState,
        startDate: Date?,
        endDate: Date?,
        lastDate: Date?,
        currentActivity: WorkoutActivity?,
        activities: [WorkoutActivity],
        collectionStartDate: Date?,
        collectionEndDate: Date?,
        events: [WorkoutEvent],
        metadata: [String: MetadataValue]
    ) {
        self.sessionID = sessionID
        self.workoutID = workoutID
        self.configuration = configuration
        self.state = state
        self.startDate = startDate
        self.endDate = endDate
        self.lastDate = lastDate
        self.currentActivity = currentActivity
        self.activities = activities
        self.collectionStartDate = collectionStartDate
        self.collectionEndDate = collectionEndDate
        self.events = events
        self.metadata = metadata
    }
}

/// A ``HealthStore`` in memory (also what a builder without a store keeps its samples in).
public actor InMemoryHealthStore: HealthStore {
    public private(set) var samples: [(sample: Sample, workoutID: UUID?)] = []
    public private(set) var workouts: [Workout] = []
    /// The sessions in progress, in the order they were first recorded.
    public private(set) var journals: [WorkoutJournal] = []

    public init() {}

    public func save(_ samples: [Sample], workoutID: UUID?) {
        self.samples += samples.map { ($0, workoutID) }
    }

    public func save(_ workout: Workout) { workouts.append(workout) }
    public func saveFinished(_ workout: Workout) { workouts.append(workout) }

    public func deleteSamples(ofWorkout id: UUID) { samples.removeAll { $0.workoutID == id } }

    public func samples(ofWorkout id: UUID) -> [Sample] {
        samples.filter { $0.workoutID == id }.map(\.sample).sorted { $0.startDate < $1.startDate }
    }

    public func saveJournal(_ journal: WorkoutJournal) {
        if let index = journals.firstIndex(where: { $0.sessionID == journal.sessionID }) {
            journals[index] = journal
        } else {
            journals.append(journal)
        }
    }
    public func loadJournals() -> [WorkoutJournal] { journals }
    public func clearJournal(sessionID: UUID) { journals.removeAll { $0.sessionID == sessionID } }
}
