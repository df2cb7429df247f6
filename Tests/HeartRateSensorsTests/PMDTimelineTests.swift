import HeartRateSensors
import Testing

@Suite struct PMDTimelineTests {
    let start = ContinuousClock.now
    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .nanoseconds(Int64((seconds * 1e9).rounded())) }
    func seconds(_ instant: ContinuousClock.Instant) -> Double {
        let duration = instant - start
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// A strap: its true rate, its clock's error against the host's (ppm; positive runs fast), where its clock
    /// started, and a deterministic delivery latency of 15 ms plus up to 70 ms more.
    struct Strap {
        var rate = 129.4
        var clockPPM = 20.0
        var clockStart: UInt64 = 599_616_000 * 1_000_000_000  // 2019-01-01 on Polar's clock
        var seed: UInt64 = 42

        /// Host time of sample `index` (seconds since the test's start) and the sensor's timestamp of it.
        func sample(_ index: Int) -> (host: Double, sensor: UInt64) {
            let host = 1 + Double(index) / rate
            return (host, clockStart + UInt64((host * (1 + clockPPM / 1e6) * 1e9).rounded()))
        }

        mutating func latency() -> Double {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return 0.015 + Double(seed >> 33 % 1000) / Double(UInt64(1) << 31) * 0.07
        }
    }

    func ecgTimeline() -> PMDTimeline { PMDTimeline(nominalRate: 130, plausibleRates: 120...140) }

    @Test func tenMinutesOfADriftingStrapStayWithinTheLeastLatency() throws {
        var strap = Strap()
        var timeline = ecgTimeline()
        var previousLast = -Double.infinity
        var worst = 0.0
        for frame in 0..<(10 * 60 * 130 / 73) {
            let lastIndex = frame * 73 + 72
            let (host, sensor) = strap.sample(lastIndex)
            let placement = try timeline.place(
                sensorTimestamp: sensor,
                count: 73,
                receivedAt: at(host + strap.latency())
            ).get()
            #expect(placement.segmentBreak == (frame == 0 ? .start : nil))
            let first = seconds(placement.firstSample)
            #expect(first > previousLast, "samples go forward")
            previousLast = first + 72 * Double(placement.interval.components.attoseconds) / 1e18
            if frame > 60 {
                // The offset holds the least latency (15 ms) and nothing of the drift: 20 ppm over ten minutes
                // would be 12 ms.
                worst = max(worst, abs(first - strap.sample(frame * 73).host - 0.015))
            }
        }
        #expect(worst < 0.002, "worst error beside the least latency: \(worst) s")
        // The sensor's clock runs 20 ppm fast, so it counts fewer samples a second of its own than the host does.
        let rate = try #require(timeline.measuredRate)
        #expect(abs(rate - 129.4 / 1.00002) < 0.001, "measured \(rate) Hz")
        let drift = try #require(timeline.driftPPM)
        #expect(abs(drift + 20) < 3, "drift \(drift) ppm")
        // Placed on the host's clock, corrected by the drift: the true rate.
        let (host, sensor) = strap.sample(8_030 * 73 + 72)
        let placement = try timeline.place(sensorTimestamp: sensor, count: 73, receivedAt: at(host + 0.02)).get()
        #expect(abs(1e18 / Double(placement.interval.components.attoseconds) - 129.4) < 0.001)
    }

    @Test func aRepeatedFrameIsDroppedAndALostOneIsAGapNotSmeared() throws {
        var strap = Strap()
        var timeline = ecgTimeline()
        func place(_ frame: Int, count: Int = 73) -> Result<PMDTimeline.Placement, PMDTimeline.Refusal> {
            let (host, sensor) = strap.sample(frame * 73 + 72)
            return timeline.place(sensorTimestamp: sensor, count: count, receivedAt: at(host + strap.latency()))
        }
        for frame in 0..<40 { _ = place(frame) }
        #expect(throws: PMDTimeline.Refusal.duplicate) { try place(39).get() }
        // Frames 40 and 41 are lost on the way.
        let after = try place(42).get()
        guard case .gap(let missing) = after.segmentBreak else {
            Issue.record("no gap: \(String(describing: after.segmentBreak))")
            return
        }
        let missingSeconds = Double(missing.components.attoseconds) / 1e18 + Double(missing.components.seconds)
        #expect(abs(missingSeconds - 146 / 129.4) < 0.01)
        // The frame after the hole sits at its own time, not stretched back over the hole.
        #expect(abs(seconds(after.firstSample) - strap.sample(42 * 73).host) < 0.1)
        #expect(try place(43).get().segmentBreak == nil)
    }

    @Test func aClockThatRestartsOrJumpsAheadStartsAgainAtTheReceipt() throws {
        var strap = Strap()
        var timeline = ecgTimeline()
        for frame in 0..<20 {
            let (host, sensor) = strap.sample(frame * 73 + 72)
            _ = timeline.place(sensorTimestamp: sensor, count: 73, receivedAt: at(host + strap.latency()))
        }
        // Switched off and on: the clock starts again at 2019-01-01.
        let (host, _) = strap.sample(20 * 73 + 72)
        let restarted = try timeline.place(
            sensorTimestamp: strap.clockStart + 500_000_000,
            count: 73,
            receivedAt: at(host + 0.02)
        ).get()
        #expect(restarted.segmentBreak == .clockBack)
        #expect(abs(seconds(restarted.firstSample) + 72 / 129.4 - host - 0.02) < 0.001)
        // Set forward by a day.
        let (later, _) = strap.sample(21 * 73 + 72)
        let set = try timeline.place(
            sensorTimestamp: strap.clockStart + 86_400 * 1_000_000_000,
            count: 73,
            receivedAt: at(later)
        ).get()
        #expect(set.segmentBreak == .clockForward)
        #expect(abs(seconds(set.firstSample) + 72 / 129.4 - later) < 0.001)
    }

    @Test func moreSamplesThanTheTimeHoldsAreRefused() throws {
        var timeline = ecgTimeline()
        _ = timeline.place(sensorTimestamp: 10_000_000_000, count: 73, receivedAt: at(1))
        // 73 samples in 100 ms is 730 Hz: no ECG strap.
        let refusal = try #require(throws: PMDTimeline.Refusal.self) {
            try timeline.place(sensorTimestamp: 10_100_000_000, count: 73, receivedAt: at(1.1)).get()
        }
        guard case .tooManySamples(let rate) = refusal else {
            Issue.record("refused as \(refusal)")
            return
        }
        #expect(abs(rate - 730) < 1)
        // The refused frame left the timeline as it was: the next honest frame continues it.
        let next = try timeline.place(sensorTimestamp: 10_000_000_000 + 561_538_462, count: 73, receivedAt: at(1.6))
            .get()
        #expect(next.segmentBreak == nil)
    }

    @Test func aNewStreamUsesTheRateMeasuredBefore() throws {
        var strap = Strap()
        var timeline = ecgTimeline()
        for frame in 0..<10 {
            let (host, sensor) = strap.sample(frame * 73 + 72)
            _ = timeline.place(sensorTimestamp: sensor, count: 73, receivedAt: at(host + strap.latency()))
        }
        timeline.reset()
        let (host, sensor) = strap.sample(30 * 73 + 72)
        let placement = try timeline.place(sensorTimestamp: sensor, count: 73, receivedAt: at(host + 0.015)).get()
        #expect(placement.segmentBreak == .start)
        let interval = Double(placement.interval.components.attoseconds) / 1e18
        #expect(abs(1 / interval - 129.4 / 1.00002) < 0.05)
    }
}
