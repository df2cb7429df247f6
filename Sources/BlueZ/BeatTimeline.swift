import HeartRateProfile

/// Places RR intervals on one continuous timeline of beats and says where it breaks.
///
/// A notification carries the intervals of the beats since the previous one, without their times. The first
/// batch is anchored with its last beat at the receive time and earlier beats back-dated; later batches continue
/// from the previous last beat, so beat times follow the sensor's own clock rather than radio jitter. The
/// timeline restarts (a gap) when beats were evidently lost: a notification interval far longer than usual
/// (notifications lost in the air), a reconnect, or beats that would end long before they were received.
///
/// Beats never add up to more time than passed: a new segment's beats happened after the previous notification
/// (less radio latency) or within a few seconds before a connection's first one, and its first interval began at
/// the last beat placed or later. Older beats of it are dropped and counted (``Placement/dropped``), never back-dated: a device that
/// sends hundreds of intervals a notification gets no more beats than its wearer's heart could have had.
public struct BeatTimeline: Sendable {
    /// The last beat's time, nil before the first beat or after ``reset()``.
    public private(set) var lastBeat: ContinuousClock.Instant?
    private var lastNotification: ContinuousClock.Instant?
    /// The usual time between notifications, learned as they arrive.
    public private(set) var usualInterval: Duration?

    public init() {}

    /// Forgets the timeline: the next beats start a new segment (after a disconnect).
    public mutating func reset() {
        lastBeat = nil
        lastNotification = nil
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
        var lost = false
        if let lastNotification {
            let gap = receivedAt - lastNotification
            if let usual = usualInterval, gap > usual * 1.6 + .milliseconds(150) {
                lost = true
            } else if gap >= .milliseconds(50), gap >= (usualInterval ?? .zero) * 0.5 {
                // A smoothed interval; gaps are left out so one loss does not teach the timeline to expect more,
                // and so are bursts (notifications delayed on the way arrive back to back), which would teach it
                // to take the next ordinary interval for a loss.
                usualInterval = usualInterval.map { $0 * 0.8 + gap * 0.2 } ?? gap
            }
        }
        lastNotification = receivedAt
        guard !intervals.isEmpty else {
            if lost { lastBeat = nil }
            return Placement(beatTimes: [], isContinuous: !lost && lastBeat != nil)
        }
        let total = intervals.reduce(Duration.zero) { $0 + $1.duration }
        if !lost, let lastBeat {
            let end = lastBeat + total
            let longest = intervals.max().map(\.duration) ?? .seconds(1)
            // The newest beat cannot be later than its receipt (allowing for radio latency) nor much earlier than
            // the beat that has not happened yet.
            if end <= receivedAt + .milliseconds(500), receivedAt - end <= longest * 2 + .milliseconds(500) {
                var times: [ContinuousClock.Instant] = []
                var time = lastBeat
                for interval in intervals {
                    time += interval.duration
                    times.append(time)
                }
                self.lastBeat = time
                return Placement(beatTimes: times, isContinuous: true)
            }
        }
        // A new segment: the newest beat at the receive time, the others back-dated from it, as far as the time that
        // passed allows. A beat reported now happened after the previous notification (less radio latency), or
        // within the first window for a connection's first one; and its interval began no earlier than the last
        // beat placed (give or take ``overlap``), since that beat was reported already.
        let earliestBeat = previous.map { $0 - latency } ?? receivedAt - firstWindow
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
        if !times.isEmpty { self.lastBeat = receivedAt }
        return Placement(beatTimes: times, isContinuous: false, dropped: dropped)
    }
}
