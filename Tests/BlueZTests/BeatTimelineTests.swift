import BlueZ
import HeartRateProfile
import Testing

@Suite struct BeatTimelineTests {
    let start = ContinuousClock.now
    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .seconds(seconds) }
    func rr(_ milliseconds: Int...) -> [RRInterval] {
        milliseconds.map { RRInterval(ticks: UInt16($0 * 1024 / 1000)) }
    }

    @Test func theFirstBatchIsBackDatedFromItsReceipt() {
        var timeline = BeatTimeline()
        let placement = timeline.place(rr(800, 900), receivedAt: at(10))
        #expect(!placement.isContinuous)
        #expect(placement.beatTimes.last == at(10))
        #expect(placement.beatTimes[1] - placement.beatTimes[0] == rr(900)[0].duration)
    }

    @Test func laterBatchesContinueFromTheLastBeatNotFromTheirReceipt() {
        var timeline = BeatTimeline()
        _ = timeline.place(rr(1000), receivedAt: at(1))
        // Received 30 ms late: the beat still lands exactly one interval after the previous one.
        let next = timeline.place(rr(1000), receivedAt: at(2.03))
        #expect(next.isContinuous)
        #expect(next.beatTimes == [at(1) + rr(1000)[0].duration])
        let empty = timeline.place([], receivedAt: at(3))
        #expect(empty.isContinuous && empty.beatTimes.isEmpty)
    }

    @Test func aLostNotificationStartsANewSegment() {
        var timeline = BeatTimeline()
        for second in 1...5 { _ = timeline.place(rr(1000), receivedAt: at(Double(second))) }
        // Notification 6 never arrived.
        let afterLoss = timeline.place(rr(1000), receivedAt: at(7))
        #expect(!afterLoss.isContinuous)
        #expect(afterLoss.beatTimes == [at(7)])
        #expect(timeline.place(rr(1000), receivedAt: at(8)).isContinuous)
    }

    @Test func beatsThatCannotFitTheClockRestartTheTimeline() {
        var timeline = BeatTimeline()
        _ = timeline.place(rr(500), receivedAt: at(1))
        // Three seconds of intervals arriving one second later cannot follow the last beat.
        let impossible = timeline.place(rr(1000, 1000, 1000), receivedAt: at(2))
        #expect(!impossible.isContinuous)
        #expect(impossible.beatTimes.last == at(2))
    }

    @Test func resetMakesTheNextBeatsANewSegment() {
        var timeline = BeatTimeline()
        _ = timeline.place(rr(1000), receivedAt: at(1))
        timeline.reset()
        #expect(timeline.lastBeat == nil)
        #expect(!timeline.place(rr(1000), receivedAt: at(2)).isContinuous)
    }

    @Test func theUsualIntervalIsLearnedWithoutCountingGaps() {
        var timeline = BeatTimeline()
        for tick in 0..<10 { _ = timeline.place([], receivedAt: at(Double(tick) * 0.25)) }
        #expect(timeline.usualInterval == .milliseconds(250))
        _ = timeline.place([], receivedAt: at(5))
        #expect(timeline.usualInterval == .milliseconds(250))
    }

    @Test func aFirstNotificationReachesBackAtMostItsWindow() {
        var timeline = BeatTimeline()
        // 255 beats a second apart: only those of the three seconds before the first receipt are placed.
        let placement = timeline.place(Array(repeating: rr(1000)[0], count: 255), receivedAt: at(100))
        #expect(placement.beatTimes == [at(97), at(98), at(99), at(100)])
        #expect(placement.dropped == 251)
        #expect(placement.beatTimes.last == at(100))
    }

    @Test func aStormGetsNoMoreBeatsThanTimePassed() {
        var timeline = BeatTimeline()
        var beats = 0
        var dropped = 0
        // A thousand notifications a second for ten seconds, each with 255 intervals of 300 ms.
        for index in 0..<10_000 {
            let placement = timeline.place(
                Array(repeating: rr(300)[0], count: 255),
                receivedAt: at(1 + Double(index) / 1000)
            )
            beats += placement.beatTimes.count
            dropped += placement.dropped
        }
        // A heart beating every 300 ms has about 33 beats in ten seconds; with the first window's and the
        // timeline's overlap allowance (a beat every 200 ms at most), at most 50 + 11.
        #expect(beats <= 10 * 1000 / 200 + 3 * 1000 / 300 + 1, "\(beats) beats")
        #expect(beats + dropped == 10_000 * 255)
    }

    @Test func beatsAfterALostNotificationReachBackToThePreviousOneOnly() {
        var timeline = BeatTimeline()
        for second in 1...5 { _ = timeline.place(rr(1000), receivedAt: at(Double(second))) }
        // Notification 6 was lost; 7 claims ten beats: only those after notification 5 (less latency) fit.
        let placement = timeline.place(Array(repeating: rr(1000)[0], count: 10), receivedAt: at(7))
        #expect(!placement.isContinuous)
        #expect(placement.beatTimes == [at(6), at(7)])
        #expect(placement.dropped == 8)

        // Empty notifications between do not shorten what the next beat's interval may cover.
        var quiet = BeatTimeline()
        quiet.reset()
        for tenth in 1...4 { _ = quiet.place([], receivedAt: at(20 + Double(tenth) / 10)) }
        #expect(quiet.place(rr(850), receivedAt: at(20.5)).beatTimes == [at(20.5)])
    }
}
