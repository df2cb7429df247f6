import Foundation
import Testing
import WorkoutKit

/// Every command in every state, against HealthKit's table.
@Suite struct WorkoutSessionStateMachineTests {
    typealias Machine = WorkoutSessionStateMachine
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    enum Kind: CaseIterable, CustomStringConvertible {
        case prepare, startActivity, pause, resume, stopActivity, end, beginNewActivity, endCurrentActivity
        func command(at date: Date) -> Machine.Command {
            switch self {
            case .prepare: .prepare(date)
            case .startActivity: .startActivity(date)
            case .pause: .pause(date)
            case .resume: .resume(date)
            case .stopActivity: .stopActivity(date)
            case .end: .end(date)
            case .beginNewActivity: .beginNewActivity(WorkoutConfiguration(activityType: .cycling), date, id: UUID())
            case .endCurrentActivity: .endCurrentActivity(date)
            }
        }
        var description: String { command(at: WorkoutSessionStateMachineTests.t0).name }
    }

    /// A machine brought into `state` through legal commands (with an activity in progress when asked).
    static func machine(in state: WorkoutSessionState, withActivity: Bool = false) throws -> Machine {
        var machine = Machine()
        let path: [Kind] =
            switch state {
            case .notStarted: []
            case .prepared: [.prepare]
            case .running: [.startActivity]
            case .paused: [.startActivity, .pause]
            case .stopped: [.startActivity, .stopActivity]
            case .ended: [.end]
            }
        for (index, kind) in path.enumerated() {
            _ = try machine.handle(kind.command(at: t0.addingTimeInterval(Double(index))))
        }
        if withActivity {
            _ = try machine.handle(Kind.beginNewActivity.command(at: t0.addingTimeInterval(5)))
        }
        #expect(machine.state == state)
        return machine
    }

    /// The state each command leads to from each state, nil where HealthKit refuses it.
    static let table: [WorkoutSessionState: [Kind: WorkoutSessionState]] = [
        .notStarted: [.prepare: .prepared, .startActivity: .running, .end: .ended],
        .prepared: [.startActivity: .running, .end: .ended],
        .running: [
            .pause: .paused, .stopActivity: .stopped, .end: .ended, .beginNewActivity: .running,
        ],
        .paused: [
            .resume: .running, .stopActivity: .stopped, .end: .ended, .beginNewActivity: .paused,
        ],
        .stopped: [.end: .ended],
        .ended: [:],
    ]

    @Test(arguments: WorkoutSessionState.allCases, Kind.allCases)
    func transition(from state: WorkoutSessionState, command kind: Kind) throws {
        var machine = try Self.machine(in: state)
        let before = machine
        let date = Self.t0.addingTimeInterval(100)
        if let expected = Self.table[state]?[kind] {
            let actions = try machine.handle(kind.command(at: date))
            #expect(machine.state == expected)
            let changes = actions.compactMap { action -> WorkoutSessionState? in
                if case .stateChanged(let to, _, let at) = action {
                    #expect(at == date)
                    return to
                }
                return nil
            }
            #expect(changes.last == (expected == state ? nil : expected))
        } else {
            // Running and paused sessions accept endCurrentActivity, but there is no activity to end here.
            let expected: WorkoutSessionError =
                kind == .endCurrentActivity && (state == .running || state == .paused)
                ? .noCurrentActivity : .invalidTransition(command: kind.description, state: state)
            #expect(throws: expected) {
                try machine.handle(kind.command(at: date))
            }
            #expect(machine == before, "an illegal call changes nothing")
        }
    }

    @Test func endingARunningSessionStopsItFirst() throws {
        var machine = try Self.machine(in: .running)
        let date = Self.t0.addingTimeInterval(60)
        let actions = try machine.handle(.end(date))
        #expect(
            actions == [
                .stateChanged(to: .stopped, from: .running, date: date),
                .stateChanged(to: .ended, from: .stopped, date: date),
            ]
        )
        #expect(machine.endDate == date)
    }

    @Test func pauseAndResumeAreWorkoutEvents() throws {
        var machine = try Self.machine(in: .running)
        let pause = Self.t0.addingTimeInterval(30)
        let resume = Self.t0.addingTimeInterval(45)
        #expect(try machine.handle(.pause(pause)).contains(.workoutEvent(WorkoutEvent(type: .pause, start: pause))))
        #expect(try machine.handle(.resume(resume)).contains(.workoutEvent(WorkoutEvent(type: .resume, start: resume))))
    }

    @Test func aStoppedOrEndedSessionNeverRunsAgain() throws {
        for state in [WorkoutSessionState.stopped, .ended] {
            var machine = try Self.machine(in: state)
            for kind in [Kind.startActivity, .resume, .pause, .prepare] {
                #expect(throws: WorkoutSessionError.self) {
                    try machine.handle(kind.command(at: Self.t0.addingTimeInterval(99)))
                }
            }
            #expect(machine.state == state)
        }
    }

    @Test func datesCannotGoBackwards() throws {
        var machine = try Self.machine(in: .running)
        let before = machine
        #expect(
            throws: WorkoutSessionError.dateOutOfOrder(
                command: "pause",
                date: Self.t0.addingTimeInterval(-1),
                previous: Self.t0
            )
        ) {
            try machine.handle(.pause(Self.t0.addingTimeInterval(-1)))
        }
        #expect(machine == before)
    }

    @Test func activitiesBeginAndEndOneAtATime() throws {
        var machine = try Self.machine(in: .running, withActivity: true)
        let current = try #require(machine.currentActivity)
        #expect(current.configuration.activityType == .cycling)
        #expect(throws: WorkoutSessionError.activityInProgress) {
            try machine.handle(Kind.beginNewActivity.command(at: Self.t0.addingTimeInterval(10)))
        }
        let ended = try machine.handle(.endCurrentActivity(Self.t0.addingTimeInterval(20)))
        #expect(ended.count == 1)
        #expect(machine.currentActivity == nil)
        #expect(machine.activities.map(\.id) == [current.id])
        #expect(machine.activities.first?.endDate == Self.t0.addingTimeInterval(20))
        #expect(throws: WorkoutSessionError.noCurrentActivity) {
            try machine.handle(.endCurrentActivity(Self.t0.addingTimeInterval(21)))
        }
        // Stopping ends an activity still in progress.
        _ = try machine.handle(Kind.beginNewActivity.command(at: Self.t0.addingTimeInterval(22)))
        let stop = try machine.handle(.stopActivity(Self.t0.addingTimeInterval(30)))
        #expect(stop.contains { if case .activityEnded = $0 { true } else { false } })
        #expect(machine.activities.count == 2)
    }
}
