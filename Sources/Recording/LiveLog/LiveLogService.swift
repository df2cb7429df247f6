import Foundation
import Logging
import ServiceLifecycle

/// Writes the live bpm log: a line per measurement (``RecordingPipeline`` hands over each recorded batch), and while a
/// workout runs without any sensor data, a duration-only line every few seconds (never a made-up heart rate).
/// During a workout a line is written once the reading's samples are committed, so every line survives a crash of
/// the daemon; the lines of one commit go out in one write. Only while the store refuses samples (a full disk) is a
/// line written for a reading that is kept in memory until it can be saved.
package final class LiveLogService: Service, RecordingOutput {
    private let file: LiveLogFile
    private let format: LiveLogFormat
    private let privacy: Privacy
    private let workouts: WorkoutManager
    private let logger: Logger
    private let startTimer: StartTimer
    /// When the last line was written.
    private let lastLine = LastTime()
    /// How long a running workout goes without data before a duration-only line.
    static let quietInterval: Duration = .seconds(5)

    package init(
        file: LiveLogFile,
        format: LiveLogFormat,
        privacy: Privacy,
        workouts: WorkoutManager,
        startTimer: @escaping StartTimer,
        logger: Logger
    ) {
        self.startTimer = startTimer
        self.file = file
        self.format = format
        self.privacy = privacy
        self.workouts = workouts
        self.logger = logger
    }

    package func run() async throws {
        let workoutChanges = workouts.changes.subscribe(buffering: 1)
        // Only while a workout is ongoing: idle, no timer runs. Checked once at first (a workout recovered at start
        // may have been announced before this subscribed), then at each change.
        await cancelWhenGracefulShutdown {
            await self.workouts.whileOngoing(following: workoutChanges) {
                self.startTimer(.now + Self.quietInterval) { [weak self] in self?.writeWhileQuiet() }
            }
        }
    }

    /// While a workout is ongoing: a duration-only line when nothing was written for ``quietInterval`` and the
    /// workout runs or is paused. Returns when to look again. The timer only decides: the line is written on the
    /// workout thread, as every other line, so a disk that stalls the write holds that thread and never the one
    /// that runs the timer (systoled's bus loop, which takes every sensor's notifications).
    private func writeWhileQuiet() -> ContinuousClock.Instant {
        let now = workouts.currentSnapshot
        if now.state == .running || now.state == .paused, lastLine.age > Self.quietInterval {
            Task(executorPreference: WorkoutThread.shared) { self.write([(Date(), nil, now)]) }
        }
        return .now + Self.quietInterval
    }

    /// Writes a line for each recorded reading, all in one write (the output stage of ``RecordingPipeline``).
    package func didRecord(_ recorded: [RecordedReading]) {
        write(recorded.map { ($0.reading.reading.receivedDate, $0.reading, $0.workout) })
    }

    /// Writes a line for each entry, all in one write; `snapshot` is the workout when the reading was recorded.
    private func write(_ entries: [(date: Date, reading: DaemonReading?, snapshot: WorkoutSnapshot)]) {
        let lines = entries.map { date, reading, snapshot in
            switch format {
            case .text:
                LiveLogLine.text(
                    date: date,
                    reading: reading?.reading,
                    athlete: reading?.athlete ?? snapshot.athlete,
                    snapshot: snapshot,
                    privacy: privacy
                )
            case .json:
                LiveLogLine.json(
                    date: date,
                    reading: reading?.reading,
                    athlete: reading?.athlete ?? snapshot.athlete,
                    snapshot: snapshot,
                    privacy: privacy
                )
            }
        }
        lastLine.set(.now)
        do {
            try file.append(lines)
        } catch {
            // A full disk must not stop the workout: the store is what keeps the data.
            logger.warning("\(error)")
        }
    }
}
