/// Names of systoled's D-Bus control API, shared by the daemon and the `systole` CLI. See docs/dbus-api.md.
public enum ControlAPI {
    /// The well-known name systoled owns.
    public static let busName = "org.systole.Daemon"
    /// The object that carries the interface.
    public static let objectPath = "/org/systole/Daemon"
    /// The interface (versioned: an incompatible change gets a new name).
    public static let interface = "org.systole.Daemon1"

    /// Error names the methods reply with.
    public enum ErrorName {
        /// StartWorkout while a workout is ongoing.
        public static let ongoingWorkout = "org.systole.Error.OngoingWorkout"
        /// Pause, resume, end, cancel or add a sample without a workout.
        public static let noWorkout = "org.systole.Error.NoWorkout"
        /// The session cannot make that change from its state (pause while paused, …).
        public static let invalidState = "org.systole.Error.InvalidState"
        public static let invalidArguments = "org.systole.Error.InvalidArguments"
        public static let notFound = "org.systole.Error.NotFound"
        /// The store could not save (a full disk, say).
        public static let store = "org.systole.Error.Store"
        /// The daemon is doing that already for another caller (an import).
        public static let busy = "org.systole.Error.Busy"
        /// bluetoothd refused or failed (scan, pair, forget).
        public static let bluetooth = "org.systole.Error.Bluetooth"
    }
}
