import Foundation

/// What a ``WorkoutSession`` reports.
public enum WorkoutSessionEvent: Hashable, Sendable {
    case stateChanged(to: WorkoutSessionState, from: WorkoutSessionState, date: Date)
    /// A pause or resume (also delivered to the builder).
    case workoutEvent(WorkoutEvent)
    case activityBegan(WorkoutActivity)
    case activityEnded(WorkoutActivity)
    /// The session could not record a change for crash recovery (HealthKit's `didFailWithError`): the change
    /// took effect, but a crash now would bring back the previous state. The message says why (a full disk, say).
    case didFail(message: String)
}

/// A workout session (HealthKit's HKWorkoutSession): prepare → startActivity → pause/resume → stopActivity → end.
///
/// The rules live in ``WorkoutSessionStateMachine``; this actor applies them, reports each change on ``events``,
/// hands pause/resume events and activities to its builder, and journals the session in the store on every change
/// so ``recoverActiveWorkoutSession(store:clock:)`` can bring it back after a crash.
public actor WorkoutSession {
    public nonisolated let id: UUID
    public nonisolated let configuration: WorkoutConfiguration
    public nonisolated let events: AsyncStream<WorkoutSessionEvent>
    private let continuation: AsyncStream<WorkoutSessionEvent>.Continuation
    private let store: (any HealthStore)?
    private let clock: any WorkoutClock
    private var machine: WorkoutSessionStateMachine
    private let builder: LiveWorkoutBuilder

    /// Creates a session; with a store, samples are saved as they arrive and the session is journaled.
    public init(
        configuration: WorkoutConfiguration,
        store: (any HealthStore)? = nil,
        clock: any WorkoutClock = SystemWorkoutClock()
    ) async {
        await self.init(
            id: UUID(),
            configuration: configuration,
            store: store,
            clock: clock,
            machine: WorkoutSessionStateMachine(),
            builder: LiveWorkoutBuilder(configuration: configuration, store: store)
        )
    }

    private init(
        id: UUID,
        configuration: WorkoutConfiguration,
        store: (any HealthStore)?,
        clock: any WorkoutClock,
        machine: WorkoutSessionStateMachine,
        builder: LiveWorkoutBuilder
    ) async {
        self.id = id
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.machine = machine
        self.builder = builder
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
        await builder.setJournal { [weak self] in await self?.writeJournal() }
    }

    public var state: WorkoutSessionState { machine.state }
    public var startDate: Date? { machine.startDate }
    public var endDate: Date? { machine.endDate }
    public var currentActivity: WorkoutActivity? { machine.currentActivity }

    /// The builder that collects this session's workout.
    public nonisolated func associatedWorkoutBuilder() -> LiveWorkoutBuilder { builder }

    // MARK: Commands

    /// Gets ready (sensors connect, the first readings arrive) without starting the workout.
    public func prepare() async throws(WorkoutSessionError) { try await apply(.prepare(clock.now())) }

    /// Starts the workout at `date` (default: now).
    public func startActivity(at date: Date? = nil) async throws(WorkoutSessionError) {
        try await apply(.startActivity(date ?? clock.now()))
    }

    public func pause() async throws(WorkoutSessionError) { try await apply(.pause(clock.now())) }
    public func resume() async throws(WorkoutSessionError) { try await apply(.resume(clock.now())) }

    /// Stops the activity at `date` (default: now); the session can then only end.
    public func stopActivity(at date: Date? = nil) async throws(WorkoutSessionError) {
        try await apply(.stopActivity(date ?? clock.now()))
    }

    /// Ends the session (stopping it first if it runs). An ended session never runs again.
    public func end() async throws(WorkoutSessionError) { try await apply(.end(clock.now())) }

    /// Begins an activity of a multi-activity workout.
    public func beginNewActivity(
        configuration: WorkoutConfiguration,
        date: Date? = nil
    ) async throws(WorkoutSessionError) {
        try await apply(.beginNewActivity(configuration, date ?? clock.now(), id: UUID()))
    }

    /// Ends the activity in progress.
    public func endCurrentActivity(on date: Date? = nil) async throws(WorkoutSessionError) {
        try await apply(.endCurrentActivity(date ?? clock.now()))
    }

    private func apply(_ command: WorkoutSessionStateMachine.Command) async throws(WorkoutSessionError) {
        let actions = try machine.handle(command)
        for action in actions {
            switch action {
            case .stateChanged(let to, let from, let date):
                continuation.yield(.stateChanged(to: to, from: from, date: date))
            case .workoutEvent(let event):
                continuation.yield(.workoutEvent(event))
                // The builder collects the session's own events, as HealthKit's does.
                try? await builder.addWorkoutEvents([event])
            case .activityBegan(let activity):
                continuation.yield(.activityBegan(activity))
                await builder.record(activity: activity)
            case .activityEnded(let activity):
                continuation.yield(.activityEnded(activity))
                await builder.record(activity: activity)
            }
        }
        await writeJournal()
        if machine.state == .ended { continuation.finish() }
    }

    // MARK: Journal and recovery

    /// Writes the session and builder state to the store (a no-op without one).
    func writeJournal() async {
        guard let store else { return }
        let journal = WorkoutJournal(
            sessionID: id,
            workoutID: builder.workoutID,
            configuration: configuration,
            state: machine.state,
            startDate: machine.startDate,
            endDate: machine.endDate,
            lastDate: machine.lastDate,
            currentActivity: machine.currentActivity,
            activities: machine.activities,
            collectionStartDate: await builder.startDate,
            collectionEndDate: await builder.endDate,
            events: await builder.workoutEvents,
            metadata: await builder.metadata
        )
        do {
            if await builder.isFinished {
                try await store.clearJournal(sessionID: id)
            } else {
                try await store.saveJournal(journal)
            }
        } catch {
            continuation.yield(.didFail(message: "recording the workout for crash recovery failed: \(error)"))
        }
    }

    /// The session that was in progress when the process stopped, in its previous state, with its builder
    /// restored (statistics recomputed from the stored samples). Nil when none was. As with HealthKit, the
    /// caller re-attaches a data source; the time the process was down is not data. With several sessions in
    /// progress (a team session), the first; ``recoverActiveWorkoutSessions(store:clock:)`` brings back all.
    public static func recoverActiveWorkoutSession(
        store: any HealthStore,
        clock: any WorkoutClock = SystemWorkoutClock()
    ) async throws -> WorkoutSession? {
        guard let journal = try await store.loadJournals().first else { return nil }
        return try await recover(journal, store: store, clock: clock)
    }

    /// Every session that was in progress when the process stopped, in the order they were first recorded.
    public static func recoverActiveWorkoutSessions(
        store: any HealthStore,
        clock: any WorkoutClock = SystemWorkoutClock()
    ) async throws -> [WorkoutSession] {
        var sessions: [WorkoutSession] = []
        for journal in try await store.loadJournals() {
            sessions.append(try await recover(journal, store: store, clock: clock))
        }
        return sessions
    }

    private static func recover(
        _ journal: WorkoutJournal,
        store: any HealthStore,
        clock: any WorkoutClock
    ) async throws -> WorkoutSession {
        let builder = LiveWorkoutBuilder(
            workoutID: journal.workoutID,
            configuration: journal.configuration,
            store: store
        )
        await builder.restore(from: journal, samples: try await store.samples(ofWorkout: journal.workoutID))
        let machine = WorkoutSessionStateMachine(
            state: journal.state,
            startDate: journal.startDate,
            endDate: journal.endDate,
            lastDate: journal.lastDate,
            currentActivity: journal.currentActivity,
            activities: journal.activities
        )
        return await WorkoutSession(
            id: journal.sessionID,
            configuration: journal.configuration,
            store: store,
            clock: clock,
            machine: machine,
            builder: builder
        )
    }
}
