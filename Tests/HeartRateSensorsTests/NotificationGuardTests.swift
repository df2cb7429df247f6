import BlueZ
import Foundation
import HeartRateSensors
import Testing

@Suite struct NotificationGuardTests {
    let start = ContinuousClock.now
    let date = Date(timeIntervalSince1970: 1_795_333_165)
    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .seconds(seconds) }

    @Test func theRateBoundAdmitsABurstThenTheRate() {
        var guarding = NotificationGuard()
        // 1 000 notifications in one second: the burst of 24 and about 12 more.
        let admitted = (0..<1000).filter { guarding.admit(at: at(Double($0) / 1000)) }.count
        #expect((24...37).contains(admitted), "\(admitted)")
        // An honest sensor at 4 Hz is never throttled.
        var honest = NotificationGuard()
        #expect((0..<400).allSatisfy { honest.admit(at: at(Double($0) / 4)) })
    }

    @Test func reconnectingGainsNoNotifications() {
        var guarding = NotificationGuard()
        var admitted = 0
        for index in 0..<1000 {
            if index % 50 == 0 { guarding.newConnection() }
            if guarding.admit(at: at(Double(index) / 1000)) { admitted += 1 }
        }
        #expect(admitted <= 37, "\(admitted)")
    }

    @Test func theEnergyCounterBecomesIncrementsAcrossAReset() {
        var guarding = NotificationGuard()
        #expect(guarding.energy(65_500, at: at(0), date: date) == .baseline)
        #expect(
            guarding.energy(65_520, at: at(10), date: date + 10)
                == .increment(EnergyIncrement(kilojoules: 20, since: date))
        )
        #expect(
            guarding.energy(65_535, at: at(20), date: date + 20)
                == .increment(EnergyIncrement(kilojoules: 15, since: date + 10))
        )
        // Reset at saturation: it counts from zero.
        #expect(
            guarding.energy(12, at: at(30), date: date + 30)
                == .increment(EnergyIncrement(kilojoules: 12, since: date + 20))
        )
    }

    @Test func anEnergyJumpIsRejectedAndCountingStartsAgainFromIt() {
        var guarding = NotificationGuard()
        _ = guarding.energy(0, at: at(0), date: date)
        // 65 534 kJ a quarter of a second later.
        #expect(guarding.energy(65_534, at: at(0.25), date: date) == .outOfRange(kilojoules: 65_534, seconds: 0.25))
        // The next cycle: back to 0 (a reset, nothing to add), and the jump again.
        #expect(
            guarding.energy(0, at: at(0.5), date: date) == .increment(EnergyIncrement(kilojoules: 0, since: date))
        )
        if case .outOfRange = guarding.energy(65_534, at: at(0.75), date: date) {
        } else {
            Issue.record("the second jump was accepted")
        }
        // After a minute, a plausible 30 kJ counts again.
        #expect(
            guarding.energy(30, at: at(60.75), date: date + 60)
                == .increment(EnergyIncrement(kilojoules: 30, since: date))
        )
    }
}
