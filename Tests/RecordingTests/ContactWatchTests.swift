import Foundation
import HeartRateProfile
import Testing
import WorkoutAnalysis
import WorkoutKit

@testable import Recording

/// When a sensor loses skin contact during a workout, and whether it reports contact at all.
struct ContactWatchTests {
    static let t0 = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func aLossBecomesAnEventOnceContactIsBack() {
        var watch = ContactWatch()
        #expect(watch.observe(address: "A", contact: .detected, at: Self.t0) == nil)
        #expect(watch.observe(address: "A", contact: .notDetected, at: Self.t0 + 1) == nil)
        #expect(watch.observe(address: "A", contact: .notDetected, at: Self.t0 + 2) == nil)
        let event = watch.observe(address: "A", contact: .detected, at: Self.t0 + 5)
        #expect(event?.startDate == Self.t0 + 1)
        #expect(event?.endDate == Self.t0 + 5)
        #expect(event?.metadata[ActivityRecording.contactLostKey] == .string("A"))
        #expect(watch.metadata == [ActivityRecording.reportsContactKey("A"): .bool(true)])
    }

    @Test func lossesStillOpenCloseAtTheEndAndSensorsThatCannotTellAreSaidSo() {
        var watch = ContactWatch()
        _ = watch.observe(address: "A", contact: .notDetected, at: Self.t0 + 3)
        _ = watch.observe(address: "B", contact: .notSupported, at: Self.t0 + 4)
        let open = watch.finish(at: Self.t0 + 10)
        #expect(open.map(\.startDate) == [Self.t0 + 3])
        #expect(open.map(\.endDate) == [Self.t0 + 10])
        #expect(watch.finish(at: Self.t0 + 11).isEmpty)
        #expect(watch.metadata[ActivityRecording.reportsContactKey("B")] == .bool(false))
    }

    @Test func aSensorFlappingItsContactIsKeptAThousandTimesAndThenCounted() {
        var watch = ContactWatch()
        var events = 0
        for second in 0..<3000 {
            let date = Self.t0 + Double(second)
            if watch.observe(address: "A", contact: second % 2 == 0 ? .notDetected : .detected, at: date) != nil {
                events += 1
            }
        }
        #expect(events == ContactWatch.maximumEvents)
        #expect(watch.dropped == 500)
    }
}
