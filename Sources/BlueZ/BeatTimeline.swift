import HeartRateProfile

/// Places RR intervals on one continuous timeline of beats and says where it breaks.
///
/// A notification carries the intervals of the beats since the previous one, without their times. The first
/// batch is anchored with its last beat at the receive time and earlier beats back-dated; later batches continue
/// from the previous last beat, so beat times follow the sensor's own clock rather than radio jitter. The
/// timeline restarts (a gap) when beats were evidently lost: a notification interval far longer than usual
/// (notifications lost in the air), a reconnect, or beats that would end long before they were received.
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
    }

    /// Places the intervals of a notification received at `receivedAt`.
    public mutating func place(_ intervals: [RRInterval], receivedAt: ContinuousClock.Instant) -> Placement {
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
        // A new segment: the newest beat at the receive time, the others back-dated from it.
        var times: [ContinuousClock.Instant] = []
        var time = receivedAt
        for interval in intervals.reversed() {
            times.append(time)
            time -= interval.duration
        }
        times.reverse()
        self.lastBeat = receivedAt
        return Placement(beatTimes: times, isContinuous: false)
    }
}
