import ControlAPI
import Foundation
import Logging
import Recording
import ServiceLifecycle
import Synchronization

/// Keeps systemd informed: `READY=1` when it starts (the bus and store are up by then), `WATCHDOG=1` every half
/// watchdog interval, `STATUS=` with the workout's state and time ("running · 00:23:10", and why readings are not
/// being saved while the store refuses them) when it changes (at most once a second), and `STOPPING=1` on
/// shutdown.
final class NotifierService: Service, Sendable {
    private let notifier: SystemdNotifier
    private let workouts: WorkoutManager
    private let failing = Atomic<Bool>(false)
    private let logger: Logger

    init(notifier: SystemdNotifier, workouts: WorkoutManager, logger: Logger) {
        self.notifier = notifier
        self.workouts = workouts
        self.logger = logger
    }

    func run() async throws {
        // Not run by systemd: nobody hears the status or the watchdog, so nothing needs to wake for them.
        guard notifier.socketPath != nil else {
            try? await gracefulShutdown()
            return
        }
        let initial = await status()
        send("READY=1\nSTATUS=\(initial)")
        let changes = workouts.changes.subscribe(buffering: 1)
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                if let watchdog = self.notifier.watchdogInterval {
                    group.addTask {
                        // Already half of systemd's, as sd_watchdog_enabled(3) advises.
                        while !Task.isCancelled {
                            try? await Task.sleep(for: watchdog)
                            self.send("WATCHDOG=1")
                        }
                    }
                }
                group.addTask {
                    // The status changes with the workout's state, and its time once a second while one is
                    // ongoing; idle, nothing changes and nothing wakes. Checked once at first (a workout recovered at
                    // start may have been announced before this subscribed), then at each change.
                    var last = initial
                    var iterator = changes.makeAsyncIterator()
                    repeat {
                        repeat {
                            let status = await self.status()
                            if status != last { self.send("STATUS=\(status)") }
                            last = status
                            guard status != "idle" else { break }
                            try? await Task.sleep(for: .seconds(1))
                        } while !Task.isCancelled
                    } while await iterator.next() != nil
                }
            }
        }
        send("STOPPING=1\nSTATUS=stopping")
    }

    /// `idle`, or `running · 00:23:10`. No health value: `systemctl status` shows this line to every user.
    func status() async -> String {
        let snapshot = workouts.currentSnapshot
        guard snapshot.workoutID != nil else { return "idle" }
        var parts = [snapshot.stateName]
        parts.append(formatElapsed(snapshot.elapsed))
        if let problem = snapshot.storeError { parts.append("readings kept in memory, not saved: \(problem)") }
        return parts.joined(separator: " · ")
    }

    /// Sends at once or not at all (a listener that stops reading must not stall a thread), warning once for each
    /// spell of failures rather than every second.
    private func send(_ message: String) {
        do {
            try notifier.notify(message)
            if failing.exchange(false, ordering: .relaxed) { logger.notice("sd_notify: messages reach systemd again") }
        } catch {
            if !failing.exchange(true, ordering: .relaxed) { logger.warning("sd_notify: \(error)") }
        }
    }
}
