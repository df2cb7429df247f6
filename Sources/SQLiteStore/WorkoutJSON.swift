import Foundation
import WorkoutKit

/// A workout as JSON, encoded as the store encodes what it keeps as JSON (``Coding``): how the central database
/// keeps it whole (`systole_workout.body`) and `systole --database` reads it back.
public enum WorkoutJSON {
    public static func encode(_ workout: Workout) throws -> String { try Coding.encode(workout) }

    public static func decode(_ text: String) throws -> Workout { try Coding.decode(Workout.self, text) }
}
