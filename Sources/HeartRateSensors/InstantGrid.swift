import BlueZ

/// Instants a fixed step apart from an origin: deadlines rounded up onto it fall due together.
struct InstantGrid: Sendable {
    let origin: ContinuousClock.Instant
    let step: Duration

    init(step: Duration, origin: ContinuousClock.Instant = .now) {
        self.step = step
        self.origin = origin
    }

    /// The first instant of the grid at or after `instant`.
    func next(atOrAfter instant: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let steps = ((instant - origin) / step).rounded(.up)
        return origin + step * steps
    }
}
