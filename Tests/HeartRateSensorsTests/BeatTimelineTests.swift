import BlueZ
import HeartRateProfile
import HeartRateSensors
import SystoleTestSupport
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

    @Test func lostNotificationsBreakTheTimelineWhenTheSensorIsBackToItsPace() {
        var timeline = BeatTimeline()
        for second in 1...5 { _ = timeline.place(rr(1000), receivedAt: at(Double(second))) }
        // Notifications 6 to 9 never arrived. Notification 10, five seconds after 5, could as well be one a busy
        // machine read late: its beat continues the timeline for now.
        let afterLoss = timeline.place(rr(1000), receivedAt: at(10))
        #expect(afterLoss.isContinuous)
        #expect(afterLoss.beatTimes == [at(6)])
        // Notification 11 arrives a second later, at the sensor's pace, and still lags four seconds behind: beats
        // were lost, and the timeline starts again at its receipt.
        let regular = timeline.place(rr(1000), receivedAt: at(11))
        #expect(!regular.isContinuous)
        #expect(regular.beatTimes == [at(11)])
        #expect(timeline.place(rr(1000), receivedAt: at(12)).isContinuous)
    }

    @Test func beatsTheSensorDidNotReportBreakTheTimeline() {
        var timeline = BeatTimeline()
        for second in 1...5 { _ = timeline.place(rr(1000), receivedAt: at(Double(second))) }
        // Five notifications on time without intervals (the strap lost skin contact): five seconds without beats.
        for second in 6...10 { #expect(timeline.place([], receivedAt: at(Double(second))).isContinuous) }
        let resumed = timeline.place(rr(1000), receivedAt: at(11))
        #expect(!resumed.isContinuous)
        #expect(resumed.beatTimes == [at(11)])
    }

    /// A machine too busy to read for seconds, then reading what queued all at once: every beat keeps its place.
    @Test func aStallReadAsABurstKeepsTheTimeline() {
        var timeline = BeatTimeline()
        var placed: [ContinuousClock.Instant] = []
        for second in 1...5 { placed += timeline.place(rr(1000), receivedAt: at(Double(second))).beatTimes }
        for (index, second) in (6...10).enumerated() {
            let placement = timeline.place(rr(1000), receivedAt: at(10.2 + Double(index) / 1000))
            #expect(placement.isContinuous, "notification \(second), read in the burst")
            placed += placement.beatTimes
        }
        let next = timeline.place(rr(1000), receivedAt: at(11))
        #expect(next.isContinuous)
        placed += next.beatTimes
        #expect(placed == (1...11).map { at(Double($0)) })
    }

    /// The first notification of a connection read late, 1.6 s after it was sent, with the next one: the later ones,
    /// read on time, find the timeline ahead of them, and pull it back to their receipt, half an interval at most
    /// each time; nothing breaks.
    @Test func aLateFirstNotificationIsPulledBackWithoutABreak() {
        var timeline = BeatTimeline()
        var placed = timeline.place(rr(1000), receivedAt: at(2.6)).beatTimes
        for (second, receipt) in zip(2...8, [2.601, 3, 4, 5, 6, 7, 8]) {
            let placement = timeline.place(rr(1000), receivedAt: at(receipt))
            #expect(placement.isContinuous, "the notification sent at \(second) s")
            placed += placement.beatTimes
        }
        // Pulled back 0.5 s at each of the next three beats, and the last 0.1 s at the fourth.
        let spacing = zip(placed, placed.dropFirst()).map { ($1 - $0) / .milliseconds(1) }
        #expect(spacing.map { $0.rounded() } == [500, 500, 500, 900, 1000, 1000, 1000])
        #expect(abs(((placed.last ?? at(0)) - at(8)) / .microseconds(1)) < 1)
    }

    /// A connection's first notification held 6 s (the sender stalled right after the subscription), then the rest
    /// read as a burst and on time at 4 a second, 180 bpm: more ahead than ``BeatTimeline/pullBackBudget`` covers.
    /// Knowing when it began listening, the timeline may pull back that much more and stays whole; without it, it
    /// breaks, as for a sensor that reports more beats than time passed.
    @Test(arguments: [true, false]) func aFirstNotificationHeldSinceListeningIsPulledBack(knowsWhen: Bool) {
        var timeline = BeatTimeline()
        timeline.reset(listeningSince: knowsWhen ? at(0) : nil)
        var breaks = 0
        var started = false
        var aheadAtEnd = Duration.zero
        // Due every 0.25 s from 0.25 s, with the beats (one every 1/3 s) since the previous one.
        var nextBeat = 1.0 / 3
        for index in 1...120 {
            let due = Double(index) * 0.25
            var intervals: [RRInterval] = []
            while nextBeat <= due {
                intervals += rr(333)
                nextBeat += 1.0 / 3
            }
            // Everything due before 6 s is read at 6 s and a few milliseconds apart; the rest on time.
            let receipt = max(due, 6 + Double(index) * 0.002)
            let placement = timeline.place(intervals, receivedAt: at(receipt))
            if started, !placement.isContinuous, !intervals.isEmpty { breaks += 1 }
            if let last = placement.beatTimes.last {
                started = true
                aheadAtEnd = last - at(receipt)
            }
        }
        if knowsWhen {
            #expect(breaks == 0)
            #expect(aheadAtEnd <= .milliseconds(1), "pulled back to the receipts: \(aheadAtEnd)")
        } else {
            #expect(breaks >= 1)
        }
    }

    /// A sensor silent for 10 s after the subscription, then reporting two seconds of beats every second: the
    /// silence lets it run ahead by no more than it lasted, and the timeline still breaks.
    @Test func aSilentStartBuysNoMoreBeatsThanTheSilenceLasted() {
        var timeline = BeatTimeline()
        timeline.reset(listeningSince: at(0))
        var beats = 0
        var breaks = 0
        for second in 10...60 {
            let placement = timeline.place(rr(1000, 1000), receivedAt: at(Double(second)))
            if second > 10, !placement.isContinuous { breaks += 1 }
            beats += placement.beatTimes.count
        }
        #expect(breaks >= 1)
        // Sixty seconds since listening hold sixty beats; the budget lets a few more through before each break.
        #expect(beats <= 60 + 2 * 4, "\(beats) beats")
    }

    /// A sensor that reports more beats than time passed is pulled back within the budget, then breaks, and its
    /// next segment leaves out the beats that do not fit.
    @Test func beatsAheadOfTimeBeyondTheBudgetBreakTheTimeline() {
        var timeline = BeatTimeline()
        _ = timeline.place(rr(1000), receivedAt: at(1))
        var breaks = 0
        var beats = 1
        // Two beats of a second each, every second: a second ahead at each notification.
        for second in 2...20 {
            let placement = timeline.place(rr(1000, 1000), receivedAt: at(Double(second)))
            if !placement.isContinuous { breaks += 1 }
            beats += placement.beatTimes.count
        }
        #expect(breaks >= 1)
        // Twenty seconds hold twenty beats; the budget lets a few more through before each break.
        #expect(beats <= 20 + 2 * 4, "\(beats) beats")
    }

    /// Notifications read late by a loaded machine (up to 0.9 s for a while, stalls of up to 8 s read as a burst,
    /// always in order) at 1 and 4 notifications a second: one timeline, each beat its interval after the previous.
    @Test(arguments: [1.0, 4.0]) func theJitterOfALoadedMachineNeverBreaksTheTimeline(rate: Double) {
        var random = SplitMix64(seed: UInt64(rate * 1000))
        var timeline = BeatTimeline()
        // The sensor's beats (60–180 bpm, each interval within 10 % of the previous) on its own clock.
        var beats: [Double] = []
        var time = 0.0
        var interval = 0.6
        while time < 600 {
            interval = min(1.0, max(0.333, interval * Double.random(in: 0.9...1.1, using: &random)))
            time += interval
            beats.append(time)
        }
        var arrival = 0.0
        var slowUntil = 0.0
        var stallUntil = 0.0
        var lastSent = 0.0
        var placedBeats: [(ContinuousClock.Instant, RRInterval)] = []
        var breaks = 0
        for index in 1..<Int(590 * rate) {
            let sent = Double(index) / rate
            let inside = beats.filter { $0 > lastSent && $0 <= sent }
            lastSent = sent
            let intervals = inside.map { beat in
                RRInterval(ticks: UInt16(((beat - (beats.last { $0 < beat } ?? beat - 1)) * 1024).rounded()))
            }
            if Double.random(in: 0..<1, using: &random) < 0.01 { slowUntil = sent + Double.random(in: 1...10) }
            if Double.random(in: 0..<1, using: &random) < 0.005 { stallUntil = sent + Double.random(in: 1...8) }
            let delay = sent < slowUntil ? Double.random(in: 0.3...0.9) : Double.random(in: 0...0.05)
            arrival = max(arrival + 0.0001, sent + delay, stallUntil)
            let placement = timeline.place(intervals, receivedAt: at(arrival))
            if !placement.isContinuous, !placement.beatTimes.isEmpty, !placedBeats.isEmpty { breaks += 1 }
            placedBeats += zip(placement.beatTimes, intervals.suffix(placement.beatTimes.count)).map { ($0, $1) }
        }
        #expect(breaks == 0)
        // Each beat its interval after the previous one, unless pulled back (by at most half of it) towards a
        // receipt; in all, no more than the first notification was late.
        var pulledBack = Duration.zero
        for (previous, beat) in zip(placedBeats, placedBeats.dropFirst()) where breaks == 0 {
            let spacing = beat.0 - previous.0
            #expect(spacing <= beat.1.duration && spacing >= beat.1.duration / 2)
            pulledBack += beat.1.duration - spacing
        }
        #expect(pulledBack <= .seconds(1), "pulled back \(pulledBack) in all")
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

    /// A connection's first notifications read as a burst (the pace still unknown), then ten seconds of silence
    /// (notifications lost), then the sensor at its 5 Hz again with a beat every 0.83 s: the silence is not taken for
    /// the sensor's pace, and the beats lost in it break the timeline once the sensor is heard at its pace.
    @Test func aSilenceBeforeThePaceIsKnownIsNotLearnedAsThePace() {
        var timeline = BeatTimeline()
        var beat = 0
        func notify(at time: Double) -> BeatTimeline.Placement {
            beat += 1
            return timeline.place(beat % 4 == 0 ? rr(830) : [], receivedAt: at(time))
        }
        for index in 0..<9 { _ = notify(at: 1 + Double(index) * 0.007) }
        #expect(timeline.usualInterval == nil)
        var breaks = 0
        for index in 0..<40 where !notify(at: 11 + Double(index) * 0.2).isContinuous { breaks += 1 }
        #expect(breaks == 1)
        #expect(timeline.usualInterval.map { abs(($0 - .milliseconds(200)) / .milliseconds(1)) < 1 } == true)
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

extension BeatTimelineTests {
    /// A strap at 70 bpm notifying five times a second, whose connection's first notification may have been read 2 s
    /// late (the next ones then read in a burst, in order), then 5 s of notifications lost: the timeline breaks once
    /// the strap is heard at its pace again, pull-back or not.
    @Test(arguments: [0.0, 2.0]) func lostNotificationsAfterALateFirstReadBreakTheTimeline(firstLate: Double) {
        var timeline = BeatTimeline()
        let rr = 0.857
        var beat = 0.0
        var breaks: [Double] = []
        var sent = 0.0
        var lastReceipt = -1.0
        func notify(at time: Double, late: Double = 0) {
            var intervals: [RRInterval] = []
            while beat + rr <= time {
                beat += rr
                intervals.append(RRInterval(ticks: UInt16(rr * 1024)))
            }
            let receipt = max(time + late, lastReceipt + 0.001)
            lastReceipt = receipt
            let placement = timeline.place(intervals, receivedAt: at(receipt))
            if !placement.isContinuous, !placement.beatTimes.isEmpty { breaks.append(time) }
        }
        while sent < 10 {
            sent += 0.2
            notify(at: sent, late: breaks.isEmpty && beat == 0 ? firstLate : 0)
        }
        let before = breaks.count
        // Five seconds of notifications lost (their beats with them).
        while sent < 15 {
            sent += 0.2
            while beat + rr <= sent { beat += rr }
        }
        while sent < 20 {
            sent += 0.2
            notify(at: sent)
        }
        #expect(breaks.count > before, "no break after the lost notifications: \(breaks)")
    }
}
