import BlueZ
import HeartRateSensors

/// Which of one sensor's connection states go to the journal.
///
/// Every change is logged while things change; but a sensor that is not there fails the same way every 30 s for
/// as long as it stays away (searching, "no sensor … found", reconnecting), and a journal of those hides what
/// matters. So the first failure is logged with its retry, the identical attempts after it are not, and the next
/// line says how many there were: when the sensor streams again, or when it fails differently.
package struct SensorJournal {
    /// The failure logged last, while its attempts repeat (nil: none since the sensor last streamed).
    private var failure: String?
    /// Attempts that failed the same way since that line, not logged.
    private var repeats = 0
    /// Attempts that failed since the sensor last streamed.
    private var failures = 0

    /// The line to log for `state`, or nil to stay quiet.
    mutating func line(for state: SensorConnectionState) -> String? {
        switch state {
        case .disconnected(let reason):
            failures += 1
            if reason == failure {
                repeats += 1
                return nil
            }
            let earlier = repeats > 0 ? "; the failure before it repeated \(Self.times(repeats))" : ""
            failure = reason
            repeats = 0
            return "\(state) (the same failure again is not logged\(earlier))"
        case .waitingToReconnect:
            // The retry after a logged failure says when the next attempt comes; those after a repeat do not.
            return repeats == 0 ? "\(state)" : nil
        case .searching, .connecting, .resolvingServices, .pairing:
            return failure == nil ? "\(state)" : nil
        case .streaming:
            defer {
                failure = nil
                repeats = 0
                failures = 0
            }
            return failures > 1 ? "\(state) (after \(failures) failed attempts)" : "\(state)"
        case .stale:
            return "\(state)"
        }
    }

    private static func times(_ count: Int) -> String { count == 1 ? "once" : "\(count) times" }
}
