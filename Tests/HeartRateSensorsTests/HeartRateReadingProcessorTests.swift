import BlueZ
import Foundation
import HeartRateProfile
import HeartRateSensors
import Testing

/// Everything between a notification's bytes and a reading, with no bus: plain payloads at chosen instants.
@Suite struct HeartRateReadingProcessorTests {
    let start = ContinuousClock.now
    let date = Date(timeIntervalSince1970: 1_795_333_165)
    let strap = try! BluetoothAddress("A0:9E:1A:94:8D:23")

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .seconds(seconds) }

    /// A notification of `payload` `seconds` after the start.
    func notification(_ payload: [UInt8], at seconds: Double) -> GattNotification {
        GattNotification(value: payload, receivedAt: at(seconds), receivedDate: date.addingTimeInterval(seconds))
    }

    /// 8-bit heart rate with contact detected and RR intervals (in 1/1024 s).
    func payload(_ bpm: UInt8, rr: [UInt16] = []) -> [UInt8] {
        var bytes: [UInt8] = [0x06 | (rr.isEmpty ? 0 : 0x10), bpm]
        for interval in rr { bytes += [UInt8(interval & 0xFF), UInt8(interval >> 8)] }
        return bytes
    }

    func processor(_ change: (inout RadioLimits) -> Void = { _ in }) -> HeartRateReadingProcessor {
        var limits = RadioLimits()
        change(&limits)
        var processor = HeartRateReadingProcessor(limits: limits)
        processor.newConnection(at: at(0))
        return processor
    }

    @Test func aPayloadBecomesAReadingWithItsBeatsBackDatedFromReceipt() throws {
        var processor = processor()
        let first = processor.process(notification(payload(60, rr: [1024]), at: 1), from: strap)
        let second = processor.process(notification(payload(61, rr: [1024]), at: 2), from: strap)
        let readings = (first.events + second.events).compactMap { if case .reading(let r) = $0 { r } else { nil } }
        try #require(readings.count == 2)
        #expect(readings.map(\.measurement.heartRate) == [60, 61])
        #expect(readings.allSatisfy { $0.sensor == strap && $0.measurement.sensorContact == .detected })
        #expect(readings[1].isContinuous, "a beat a second after the last, a second later, continues the timeline")
        for reading in readings {
            for beat in reading.beats {
                let back = reading.receivedAt - beat.time
                let seconds = Double(back.components.seconds) + Double(back.components.attoseconds) / 1e18
                #expect(abs(reading.receivedDate.timeIntervalSince(beat.date) - seconds) < 1e-6)
            }
        }
        #expect(processor.notifications == 2 && processor.malformed == 0)
    }

    @Test func aFloodIsRefusedBeforeItIsDecoded() {
        var processor = processor {
            $0.notificationsPerSecond = 2
            $0.notificationBurst = 2
        }
        var events: [HeartRateSensorEvent] = []
        // Three at one instant: the burst takes two; the third is refused unread, even though it is malformed.
        events += processor.process(notification(payload(70), at: 1), from: strap).events
        events += processor.process(notification(payload(71), at: 1), from: strap).events
        events += processor.process(notification([0x01], at: 1), from: strap).events
        let throttled = events.filter { if case .rejected(.throttled, 1, _) = $0 { true } else { false } }
        #expect(throttled.count == 1)
        #expect(processor.malformed == 0)
        #expect(processor.notifications == 2)
        // Half a second later the bound has refilled one.
        let later = processor.process(notification(payload(72), at: 1.5), from: strap)
        #expect(later.events.contains { if case .reading = $0 { true } else { false } })
    }

    @Test func malformedAndImpossiblePayloadsAreCountedAndSkipped() {
        var processor = processor()
        let malformed = processor.process(notification([0x01, 70], at: 1), from: strap)
        #expect(malformed.events.count == 1)
        if case .malformed(let bytes, _) = malformed.events.first { #expect(bytes == [0x01, 70]) }
        let impossible = processor.process(notification(payload(255), at: 2), from: strap)
        #expect(impossible.events.count == 1)
        if case .rejected(.outOfRange, 1, let detail) = impossible.events.first {
            #expect(detail.contains("255 bpm"))
        } else {
            Issue.record("a heart rate of 255 is out of range: \(impossible.events)")
        }
        #expect(processor.malformed == 1 && processor.notifications == 0)
    }

    @Test func implausibleAndExcessBeatsLeaveTheReadingAndAreCounted() throws {
        var processor = processor()
        _ = processor.process(notification(payload(60, rr: [1024]), at: 1), from: strap)
        // 100 ms later: an interval of 100 ms (too short for a heart), and three seconds of beats that cannot fit.
        let outcome = processor.process(notification(payload(60, rr: [102, 1024, 1024, 1024]), at: 1.1), from: strap)
        let rejections = outcome.events.compactMap { event -> (RejectionReason, Int)? in
            if case .rejected(let reason, let count, _) = event { (reason, count) } else { nil }
        }
        #expect(rejections.first?.0 == .outOfRange && rejections.first?.1 == 1)
        let excess = rejections.first { $0.0 == .excessBeats }?.1 ?? 0
        #expect(excess >= 2)
        guard case .reading(let reading) = outcome.events.last else {
            Issue.record("the notification is still a reading: \(outcome.events)")
            return
        }
        #expect(reading.measurement.rrIntervals.count == 3 - excess)
        #expect(reading.beats.count == reading.measurement.rrIntervals.count)
    }

    @Test func aSaturatedEnergyCounterAsksForOneResetUntilItFails() {
        var processor = processor()
        // 16-bit energy present (flag 0x08), 0xFFFF kJ.
        let saturated: [UInt8] = [0x08, 90, 0xFF, 0xFF]
        #expect(processor.process(notification(saturated, at: 1), from: strap).requestsEnergyReset)
        #expect(!processor.process(notification(saturated, at: 2), from: strap).requestsEnergyReset)
        processor.energyResetFailed()
        #expect(processor.process(notification(saturated, at: 3), from: strap).requestsEnergyReset)
    }

    @Test func silenceMakesTheSensorStaleOnceAndTheNextNotificationEndsIt() {
        var processor = processor()
        _ = processor.process(notification(payload(60), at: 1), from: strap)
        // No interval known yet: stale after three assumed intervals of 2 s, at 7 s.
        let early = processor.checkSilence(at: at(5), staleIntervals: 3, assumedInterval: .seconds(2))
        #expect(!early.becameStale && early.next == at(7))
        let due = processor.checkSilence(at: at(7), staleIntervals: 3, assumedInterval: .seconds(2))
        #expect(due.becameStale && processor.isStale)
        let again = processor.checkSilence(at: at(8), staleIntervals: 3, assumedInterval: .seconds(2))
        #expect(!again.becameStale, "reported once")
        let heard = processor.process(notification(payload(62), at: 9), from: strap)
        #expect(heard.isResumed && !processor.isStale)
    }
}
