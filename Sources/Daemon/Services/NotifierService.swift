import ControlAPI
import Foundation
import Logging
import ServiceLifecycle

/// Keeps systemd informed: `READY=1` when it starts (the bus and store are up by then), `WATCHDOG=1` every half
/// watchdog interval, `STATUS=` with the workout's state and time ("running · 00:23:10", and why readings are not
/// being saved while the store refuses them) every second, and
/// `STOPPING=1` on shutdown.
final class NotifierService: Service, Sendable {
    private let notifier: SystemdNotifier
    private let workouts: WorkoutManager
    private let logger: Logger

    init(notifier: SystemdNotifier, workouts: WorkoutManager, logger: Logger) {
        self.notifier = notifier
        self.workouts = workouts
        self.logger = logger
    }

    func run() async throws {
        send("READY=1\nSTATUS=\(await status())")
        let watchdog = notifier.watchdogInterval
        await cancelWhenGracefulShutdown {
            var sinceWatchdog: Duration = .zero
            let tick: Duration = min(watchdog ?? .seconds(1), .seconds(1))
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                sinceWatchdog += tick
                var message = "STATUS=\(await self.status())"
                if let watchdog, sinceWatchdog >= watchdog {
                    message += "\nWATCHDOG=1"
                    sinceWatchdog = .zero
                }
                self.send(message)
            }
        }
        send("STOPPING=1\nSTATUS=stopping")
    }

    /// `idle`, or `running · 00:23:10`. No health value: `systemctl status` shows this line to every user.
    func status() async -> String {
        let snapshot = await workouts.snapshot
        guard snapshot.workoutID != nil else { return "idle" }
        var parts = [snapshot.stateName]
        parts.append(formatElapsed(snapshot.elapsed))
        if let problem = snapshot.storeError { parts.append("readings kept in memory, not saved: \(problem)") }
        return parts.joined(separator: " · ")
    }

    private func send(_ message: String) {
        do {
            try notifier.notify(message)
        } catch {
            logger.warning("sd_notify: \(error)")
        }
    }
}
