import Foundation

/// The transition rules of a workout session as a value: commands go in, the actions to carry out come out, and
/// an illegal command throws and changes nothing. No clock, no I/O (postgres-nio's State/Action style), so every
/// transition is tested exhaustively; ``WorkoutSession`` wraps it for callers.
///
/// HealthKit's rules: `prepare` from notStarted; `startActivity` from notStarted or prepared; `pause` from
/// running; `resume` from paused; `stopActivity` from running or paused; `end` from any state but ended (a running
/// or paused session is stopped first); a stopped or ended session never runs again.
public struct WorkoutSessionStateMachine: Hashable, Sendable {
    public private(set) var state: WorkoutSessionState = .notStarted
    /// When the activity started (startActivity).
    public private(set) var startDate: Date?
    /// When the activity stopped (stopActivity, or end of a running session).
    public private(set) var endDate: Date?
    /// The date of the latest transition; commands may not go back before it.
    public private(set) var lastDate: Date?
    /// The activity in progress of a multi-activity workout.
    public private(set) var currentActivity: WorkoutActivity?
    /// Activities that have ended, in order.
    public private(set) var activities: [WorkoutActivity] = []

    public init() {}

    /// Restores a machine from journaled values (crash recovery).
    public init(
        state: WorkoutSessionState,
        startDate: Date?,
        endDate: Date?,
        lastDate: Date?,
        currentActivity: WorkoutActivity?,
        activities: [WorkoutActivity]
    ) {
        self.state = state
        self.startDate = startDate
        self.endDate = endDate
        self.lastDate = lastDate
        self.currentActivity = currentActivity
        self.activities = activities
    }

    /// What a caller asks of the session.
    public enum Command: Hashable, Sendable {
        case prepare(Date)
        case startActivity(Date)
        case pause(Date)
        case resume(Date)
        case stopActivity(Date)
        case end(Date)
        case beginNewActivity(WorkoutConfiguration, Date, id: UUID)
        case endCurrentActivity(Date)

        var date: Date {
            switch self {
            case .prepare(let d), .startActivity(let d), .pause(let d), .resume(let d), .stopActivity(let d),
                .end(let d), .beginNewActivity(_, let d, _), .endCurrentActivity(let d):
                d
            }
        }

        /// The command's name, as in HealthKit's API.
        public var name: String {
            switch self {
            case .prepare: "prepare"
            case .startActivity: "startActivity"
            case .pause: "pause"
            case .resume: "resume"
            case .stopActivity: "stopActivity"
            case .end: "end"
            case .beginNewActivity: "beginNewActivity"
            case .endCurrentActivity: "endCurrentActivity"
            }
        }
    }

    /// What the session must do (in order) after a command was accepted.
    public enum Action: Hashable, Sendable {
        case stateChanged(to: WorkoutSessionState, from: WorkoutSessionState, date: Date)
        case workoutEvent(WorkoutEvent)
        case activityBegan(WorkoutActivity)
        case activityEnded(WorkoutActivity)
    }

    /// Applies `command`, returning the actions, or throws without changing anything.
    public mutating func handle(_ command: Command) throws(WorkoutSessionError) -> [Action] {
        if let lastDate, command.date < lastDate {
            throw .dateOutOfOrder(command: command.name, date: command.date, previous: lastDate)
        }
        var next = self
        let actions = try next.transition(command)
        next.lastDate = command.date
        self = next
        return actions
    }

    private mutating func transition(_ command: Command) throws(WorkoutSessionError) -> [Action] {
        let invalid = WorkoutSessionError.invalidTransition(command: command.name, state: state)
        switch (command, state) {
        case (.prepare(let date), .notStarted):
            return [change(to: .prepared, date)]
        case (.startActivity(let date), .notStarted), (.startActivity(let date), .prepared):
            startDate = date
            return [change(to: .running, date)]
        case (.pause(let date), .running):
            return [change(to: .paused, date), .workoutEvent(WorkoutEvent(type: .pause, start: date))]
        case (.resume(let date), .paused):
            return [change(to: .running, date), .workoutEvent(WorkoutEvent(type: .resume, start: date))]
        case (.stopActivity(let date), .running), (.stopActivity(let date), .paused):
            return stop(date)
        case (.end(let date), .running), (.end(let date), .paused):
            return stop(date) + [change(to: .ended, date)]
        case (.end(let date), .notStarted), (.end(let date), .prepared), (.end(let date), .stopped):
            return [change(to: .ended, date)]
        case (.beginNewActivity(let configuration, let date, let id), .running),
            (.beginNewActivity(let configuration, let date, let id), .paused):
            guard currentActivity == nil else { throw .activityInProgress }
            let activity = WorkoutActivity(id: id, configuration: configuration, start: date)
            currentActivity = activity
            return [.activityBegan(activity)]
        case (.endCurrentActivity(let date), .running), (.endCurrentActivity(let date), .paused):
            guard currentActivity != nil else { throw .noCurrentActivity }
            return endActivity(date)
        case (.prepare, _), (.startActivity, _), (.pause, _), (.resume, _), (.stopActivity, _), (.end, _),
            (.beginNewActivity, _), (.endCurrentActivity, _):
            throw invalid
        }
    }

    private mutating func change(to new: WorkoutSessionState, _ date: Date) -> Action {
        let old = state
        state = new
        return .stateChanged(to: new, from: old, date: date)
    }

    private mutating func stop(_ date: Date) -> [Action] {
        endDate = date
        return endActivity(date) + [change(to: .stopped, date)]
    }

    private mutating func endActivity(_ date: Date) -> [Action] {
        guard var activity = currentActivity else { return [] }
        activity.endDate = date
        currentActivity = nil
        activities.append(activity)
        return [.activityEnded(activity)]
    }
}

/// Why a session refused a command. Nothing changed.
public enum WorkoutSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The command is not allowed in this state (e.g. resume while running).
    case invalidTransition(command: String, state: WorkoutSessionState)
    /// The command's date is before the session's previous change.
    case dateOutOfOrder(command: String, date: Date, previous: Date)
    /// beginNewActivity while another activity is in progress: end it first.
    case activityInProgress
    /// endCurrentActivity with no activity in progress.
    case noCurrentActivity

    public var description: String {
        switch self {
        case .invalidTransition(let command, let state):
            "cannot \(command) a workout session that is \(state)"
        case .dateOutOfOrder(let command, let date, let previous):
            "cannot \(command) at \(date): the session last changed at \(previous)"
        case .activityInProgress:
            "an activity is already in progress: end it (endCurrentActivity) before beginning a new one"
        case .noCurrentActivity:
            "there is no activity in progress to end"
        }
    }
}
