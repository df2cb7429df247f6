import BlueZ
import HeartRateProfile

/// Places RR intervals on one continuous timeline of beats and says where it breaks.
///
/// A notification carries the intervals of the beats since the previous one, without their times. The first
/// batch is anchored with its last beat at the receive time and earlier beats back-dated; later batches continue
/// from the previous last beat, so beat times follow the sensor's own clock, not the moment systoled read them.
///
/// A late notification is still the beats the strap measured. A loaded machine reads notifications late and then
/// several at once, so their arrival times say little on their own. What shows lost beats is the *lag*: how far the
/// receipt is behind the newest beat placed. Delays make it jump and come back; lost beats (notifications lost on
/// the way, or beats the sensor did not report) raise it for good. So the timeline breaks (a gap) only when a
/// notification that arrived at its usual pace, not after a stall nor within a burst, still lags more than the
/// least lag seen by ``lagAllowance`` and two of its intervals (the newest beat comes up to a beat before the
/// notification that reports it): then time passed without the beats that filled it. Fewer lost beats than that
/// leave the timeline whole, a few of its beats placed early by their duration; the intervals are the sensor's.
/// Beats that would come after their receipt (the segment's first notification was read late) are pulled back
/// towards it. The timeline also breaks on a reconnect (``reset()``), when one notification carries more beats than
/// the time since the previous one holds (its interval, the beat straddling it, and radio latency), and when beats
/// would still end after their receipt by more than ``aheadTolerance`` and the pull-back budget left.
///
/// Beats add up to no more time than passed, give or take ``pullBackBudget``: a new segment's beats happened after
/// the previous notification (less radio latency) or within a few seconds before a connection's first one, and its first interval began at
/// the last beat placed or later. Older beats of it are dropped and counted (``Placement/dropped``), never
/// back-dated: a device that sends hundreds of intervals a notification gets no more beats than its wearer's heart
/// could have had.
public struct BeatTimeline: Sendable {
    /// The last beat's time, nil before the first beat or after ``reset()``.
    public private(set) var lastBeat: ContinuousClock.Instant?
    private var lastNotification: ContinuousClock.Instant?
    /// The usual time between notifications, learned as they arrive.
    public private(set) var usualInterval: Duration?
    /// The least lag (receipt less the newest beat placed) of this segment, and when it was seen.
    private var leastLag: (lag: Duration, at: ContinuousClock.Instant)?
    /// When this segment began, and how far its beats were pulled back so far.
    private var segmentStart: ContinuousClock.Instant?
    private var pulledBack: Duration = .zero
    /// When the connection began listening, until its first segment starts: that segment's first notification can
    /// have been read as late as the time since then.
    private var listeningSince: ContinuousClock.Instant?
    /// How much more than ``pullBackBudget`` this segment may be pulled back: for a connection's first segment, the
    /// time from listening to its first notification.
    private var lateAnchor: Duration = .zero

    public init() {}

    /// Forgets the timeline: the next beats start a new segment (after a disconnect).
    ///
    /// - Parameter listeningSince: when the new connection's subscription was asked for. Its first notification may
    ///   have been read as late as the time since then (a busy machine, or bluetoothd, held it), so its beats may be
    ///   pulled back by that much more than ``pullBackBudget``; no sensor gets more beats than time passed since.
    public mutating func reset(listeningSince: ContinuousClock.Instant? = nil) {
        lastBeat = nil
        lastNotification = nil
        leastLag = nil
        segmentStart = nil
        pulledBack = .zero
        self.listeningSince = listeningSince
        lateAnchor = .zero
    }

    /// The result of placing one notification's intervals.
    public struct Placement: Sendable, Equatable {
        /// The time of each beat the intervals end at, in order.
        public var beatTimes: [ContinuousClock.Instant]
        /// Whether these beats continue the previous ones without a gap.
        public var isContinuous: Bool
        /// How many of the oldest intervals were left out because they would reach back before what the time
        /// since the previous notification allows; `beatTimes` holds the newest `intervals.count - dropped`.
        public var dropped = 0

        public init(beatTimes: [ContinuousClock.Instant], isContinuous: Bool, dropped: Int = 0) {
            self.beatTimes = beatTimes
            self.isContinuous = isContinuous
            self.dropped = dropped
        }
    }

    /// How far a new segment's first interval may reach back before the last beat placed: the beat times placed
    /// are estimates (back-dated from receipt), and radio latency moves them by tens of milliseconds.
    public static let overlap: Duration = .milliseconds(100)
    /// How far a continued timeline may run ahead of a receipt: the segment's first beats were placed at the receipt
    /// of its first notification, which a busy machine may have read late. Beats ahead of their receipt are pulled
    /// back towards it (``pullBackBudget``); what is still ahead by more than this and the budget left breaks the
    /// timeline.
    public static let aheadTolerance: Duration = .seconds(1)
    /// How far a segment's beats may be pulled back in all, besides the clocks' drift: about as late as a busy
    /// machine reads a connection's first notification. A sensor that reports more beats than time passed gets no
    /// more than this beyond its time before its timeline breaks.
    public static let pullBackBudget: Duration = .seconds(3)
    /// How much later than its interval's share a notification may carry its beats: radio and scheduling latency.
    static let radioLatency: Duration = .milliseconds(250)
    /// How much more than the least lag a notification arriving at its usual pace may lag before the beats that
    /// filled the time are taken as lost: a loaded machine reads notifications late by this much for a while.
    public static let lagAllowance: Duration = .seconds(1)
    /// How slowly the least lag is allowed to grow (sensor and host clocks drift apart by up to about 100 ppm).
    static let lagDrift = 0.001

    /// Places the intervals of a notification received at `receivedAt`.
    ///
    /// - Parameters:
    ///   - latency: how far a new segment's beats may reach back before the previous notification.
    ///   - firstWindow: how far the beats of the first notification (of the timeline, or after ``reset()``) may
    ///     reach back.
    public mutating func place(
        _ intervals: [RRInterval],
        receivedAt: ContinuousClock.Instant,
        latency: Duration = .milliseconds(250),
        firstWindow: Duration = .seconds(3)
    ) -> Placement {
        let previous = lastNotification
        let pace = learnPace(receivedAt: receivedAt)
        lastNotification = receivedAt
        guard !intervals.isEmpty else {
            return Placement(beatTimes: [], isContinuous: lastBeat != nil)
        }
        if let lastBeat,
            let times = continued(intervals, from: lastBeat, receivedAt: receivedAt, previous: previous, pace: pace)
        {
            self.lastBeat = times.last
            return Placement(beatTimes: times, isContinuous: true)
        }
        return newSegment(intervals, receivedAt: receivedAt, previous: previous, latency: latency, window: firstWindow)
    }

    /// How a notification arrived, against the usual interval between notifications.
    enum Pace {
        /// Within the usual interval's range, or the first of a timeline.
        case usual
        /// Long after the previous one: the machine was slow to read, or notifications were lost on the way.
        case late
        /// Right behind the previous one: delayed notifications read together.
        case burst
    }

    /// The longest time between notifications taken for a sensor's pace: straps notify about once a second. A
    /// longer gap is a stall or a silence, even before the pace is known (a connection's first notifications read
    /// as a burst teach nothing), and is never learned: one would teach the timeline to take lost beats for a pace,
    /// and stale detection to wait that long.
    static let longestUsualInterval: Duration = .seconds(3)

    /// Learns the usual interval from the gap since the previous notification, and says how this one arrived.
    private mutating func learnPace(receivedAt: ContinuousClock.Instant) -> Pace {
        guard let lastNotification else { return .usual }
        let gap = receivedAt - lastNotification
        if gap > usualInterval.map({ $0 * 1.6 + .milliseconds(150) }) ?? Self.longestUsualInterval { return .late }
        if gap >= .milliseconds(50), gap >= (usualInterval ?? .zero) * 0.5 {
            // A smoothed interval; late arrivals are left out so one stall does not teach the timeline to expect
            // more, and so are bursts, which would teach it to take the next ordinary interval for a stall.
            if gap <= Self.longestUsualInterval { usualInterval = usualInterval.map { $0 * 0.8 + gap * 0.2 } ?? gap }
            return .usual
        }
        return .burst
    }

    /// The beat times continuing the timeline from `lastBeat`, or nil when the timeline breaks here.
    ///
    /// Beats that would come after their receipt were placed from a receipt read late: they are pulled back towards
    /// it, each notification's first interval shortened by at most half (beats stay in order, a strap's intervals
    /// stay as it sent them), within ``pullBackBudget`` for the segment.
    private mutating func continued(
        _ intervals: [RRInterval],
        from lastBeat: ContinuousClock.Instant,
        receivedAt: ContinuousClock.Instant,
        previous: ContinuousClock.Instant?,
        pace: Pace
    ) -> [ContinuousClock.Instant]? {
        let total = intervals.reduce(Duration.zero) { $0 + $1.duration }
        let longest = intervals.max().map(\.duration) ?? .seconds(1)
        // A notification carries the beats since the sensor's previous one: about one notification interval of them
        // (the time since the previous receipt, or the usual interval when notifications came together), plus the
        // beat that straddles it. More than that did not happen in the time that passed.
        let gap = previous.map { receivedAt - $0 } ?? .zero
        guard total <= max(gap, usualInterval ?? .zero) + longest + Self.radioLatency else { return nil }
        var lag = receivedAt - (lastBeat + total)
        var shift = Duration.zero
        let budget =
            Self.pullBackBudget + lateAnchor + (receivedAt - (segmentStart ?? receivedAt)) * Self.lagDrift - pulledBack
        if lag < .zero, let first = intervals.first {
            shift = max(.zero, min(.zero - lag, first.duration / 2, budget))
            lag += shift
            // The placement moved back: the least lag seen moves with it, or the pull-back would look like lost beats.
            if let seen = leastLag { leastLag = (seen.lag + shift, seen.at) }
        }
        // The newest beat cannot be much later than its receipt, beyond what later notifications may still pull back
        // (a segment whose first notification was read seconds late starts that far ahead).
        guard lag >= .zero - Self.aheadTolerance - max(.zero, budget - shift) else { return nil }
        // The least lag creeps up as slowly as the clocks can drift apart, so a drifting sensor is not taken for one
        // that lost beats; a smaller lag takes its place at once.
        let least = leastLag.map { $0.lag + (receivedAt - $0.at) * Self.lagDrift } ?? lag
        // The newest beat comes up to a beat before the notification that reports it, so the lag also swings by
        // up to the next interval; two of the longest leave room for an ectopic beat's compensatory pause.
        let allowance = max((usualInterval ?? .seconds(1)) * 0.6 + .milliseconds(150), Self.lagAllowance) + longest * 2
        if lag - least > allowance, pace == .usual {
            return nil
        }
        if lag <= least { leastLag = (lag, receivedAt) }
        pulledBack += shift
        var times: [ContinuousClock.Instant] = []
        var time = lastBeat - shift
        for interval in intervals {
            time += interval.duration
            times.append(time)
        }
        return times
    }

    /// A new segment: the newest beat at the receive time, the others back-dated from it, as far as the time that
    /// passed allows. A beat reported now happened after the previous notification (less radio latency), or within
    /// the first window for a connection's first one; and its interval began no earlier than the last beat placed
    /// (give or take ``overlap``), since that beat was reported already.
    private mutating func newSegment(
        _ intervals: [RRInterval],
        receivedAt: ContinuousClock.Instant,
        previous: ContinuousClock.Instant?,
        latency: Duration,
        window: Duration
    ) -> Placement {
        let earliestBeat = previous.map { $0 - latency } ?? receivedAt - window
        let earliestStart = lastBeat.map { $0 - Self.overlap }
        var times: [ContinuousClock.Instant] = []
        var time = receivedAt
        for interval in intervals.reversed() {
            let start = time - interval.duration
            guard time >= earliestBeat, earliestStart.map({ start >= $0 }) ?? true else { break }
            times.append(time)
            time = start
        }
        times.reverse()
        let dropped = intervals.count - times.count
        if !times.isEmpty {
            lastBeat = receivedAt
            leastLag = (.zero, receivedAt)
            segmentStart = receivedAt
            pulledBack = .zero
            lateAnchor = listeningSince.map { max(.zero, receivedAt - $0) } ?? .zero
            listeningSince = nil
        }
        return Placement(beatTimes: times, isContinuous: false, dropped: dropped)
    }
}
