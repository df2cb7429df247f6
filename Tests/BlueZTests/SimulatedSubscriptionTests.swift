import BlueZ
import BlueZSimulator
import Glibc
import Synchronization
import SystoleTestSupport
import Testing

extension BlueZSimulator {
    /// Keeps the simulator's actor from running anything else for `seconds`, as a machine too loaded to schedule it
    /// would, and returns when it let go. `began` is called once the hold has begun.
    func holdBusy(for seconds: Double, began: @Sendable () -> Void) -> ContinuousClock.Instant {
        began()
        usleep(UInt32(seconds * 1_000_000))
        return .now
    }
}

/// What a client subscribed while the simulator was slow receives: the simulator, like a strap, sends nothing it
/// measured before the subscription.
@Suite struct SimulatedSubscriptionTests {
    /// The simulator held for 2 s while a client subscribes: its sensor's notifications that fell due meanwhile run
    /// late once it lets go. A strap sends nothing before its CCCD is written, so none of them may reach the client;
    /// sent as a burst, they carried beats from before the subscription and broke the product's beat timeline
    /// (`HeartRateSensorTests.beatsFormOneContinuousTimelineWithinAConnection` failed on that).
    @Test func notificationsDueBeforeASubscriptionAreNotSentAfterIt() async throws {
        let rate = 4.0
        try await withSimulator(scenario(.polarH10, rate: rate)) { bt in
            let (_, measurement) = try await bt.connectedMeasurement()
            let holding = Mutex(false)
            let simulator = bt.simulator
            let hold = Task { await simulator.holdBusy(for: 2) { holding.withLock { $0 = true } } }
            #expect(await eventually { holding.withLock { $0 } })
            let arrivals = Mutex<[ContinuousClock.Instant]>([])
            let session = try await measurement.notifications { notification in
                arrivals.withLock { $0.append(notification.receivedAt) }
            }
            // The subscription was answered after the hold: every notification sent fell due after `released`,
            // one every 1/rate s, and arrived no earlier. A burst of the ones due during the hold breaks this.
            let released = await hold.value
            #expect(await eventually { arrivals.withLock { $0.count } >= 6 })
            for (index, arrival) in arrivals.withLock({ $0 }).enumerated() {
                let allowed = rate * Double((arrival - released) / .milliseconds(1)) / 1000 + 1
                #expect(Double(index) <= allowed, "notification \(index) arrived \(arrival - released) after the hold")
            }
            // The session lasts while it is held; dropped, it would stop.
            withExtendedLifetime(session) {}
        }
    }
}
