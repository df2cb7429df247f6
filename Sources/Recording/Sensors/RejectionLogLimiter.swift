/// When to write a sensor's rejected notifications to the journal: the first at once, then at most one line per
/// ``interval`` with the count since the previous line, so a sensor sending garbage cannot flood the journal (the
/// exact counts are in `systole sensors`). A summary is written when a rejection comes after the interval.
package struct RejectionLogLimiter {
    let interval: Duration
    private var lastLine: ContinuousClock.Instant?
    private var unreported = 0

    init(interval: Duration = .seconds(60)) {
        self.interval = interval
    }

    /// Counts `count` rejections at `now`; returns how many to report in a line now (these included), or nil.
    mutating func record(_ count: Int = 1, at now: ContinuousClock.Instant) -> Int? {
        unreported += count
        if let lastLine, now - lastLine < interval { return nil }
        lastLine = now
        defer { unreported = 0 }
        return unreported
    }
}
