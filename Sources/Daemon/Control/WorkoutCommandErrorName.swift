import ControlAPI
import Recording

extension WorkoutCommandError.Kind {
    /// The D-Bus error name the control API replies with.
    var errorName: String {
        switch self {
        case .ongoingWorkout: ControlAPI.ErrorName.ongoingWorkout
        case .noWorkout: ControlAPI.ErrorName.noWorkout
        case .invalidState: ControlAPI.ErrorName.invalidState
        case .invalidArguments: ControlAPI.ErrorName.invalidArguments
        case .store: ControlAPI.ErrorName.store
        }
    }
}
