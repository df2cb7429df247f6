import BlueZ
import Foundation
import HeartRateProfile

/// Turns one sensor's notifications into readings: the rate bound, the decoding, the plausibility limits, the beat
/// timeline, the energy counter and the silence check.
///
/// A value type that knows nothing of the bus, so every rule is tested with plain bytes and instants.
/// ``HeartRateSensor`` keeps one per sensor and hands it each value its notify session delivers, on the bus's loop
/// thread; what comes out is what the sensor reports.
public struct HeartRateReadingProcessor: Sendable {
    /// What the sensor may plausibly send.
    public let limits: RadioLimits
    /// Notifications turned into readings, malformed payloads and breaks in the beat timeline so far.
    public private(set) var notifications = 0
    public private(set) var malformed = 0
    public private(set) var gaps = 0
    /// When the last notification arrived (or the connection began), for the silence check.
    public private(set) var lastReceived: ContinuousClock.Instant?
    /// Whether the sensor has been silent too long and not spoken since.
    public private(set) var isStale = false
    private var timeline = BeatTimeline()
    private var notificationGuard: NotificationGuard
    private var energyResetPending = false

    public init(limits: RadioLimits = RadioLimits()) {
        self.limits = limits
        notificationGuard = NotificationGuard(limits: limits)
    }

    /// What one notification produced.
    public struct Outcome: Sendable {
        /// In order: rejections, then the reading (none when the whole notification was refused).
        public var events: [HeartRateSensorEvent] = []
        /// The sensor was stale and is heard again.
        public var isResumed = false
        /// The energy counter is saturated: reset it through the control point (asked once until it counts again,
        /// or until ``energyResetFailed()``).
        public var requestsEnergyReset = false
    }

    /// A new connection: the beat timeline and the energy counter start again, and silence is measured from `now`.
    /// `listeningSince` is when its subscription was asked for (see ``BeatTimeline/reset(listeningSince:)``).
    public mutating func newConnection(
        at now: ContinuousClock.Instant,
        listeningSince: ContinuousClock.Instant? = nil
    ) {
        timeline.reset(listeningSince: listeningSince)
        notificationGuard.newConnection()
        lastReceived = now
        isStale = false
    }

    /// The reset asked for could not be written: a later saturated reading asks again.
    public mutating func energyResetFailed() {
        energyResetPending = false
    }

    /// Turns one notification of `sensor` into a reading, or into the reasons it was refused.
    public mutating func process(_ notification: GattNotification, from sensor: BluetoothAddress) -> Outcome {
        var outcome = Outcome()
        lastReceived = notification.receivedAt
        // The rate bound comes first: a flood costs a counter increment per notification, not a decode.
        guard notificationGuard.admit(at: notification.receivedAt) else {
            let detail = "more than \(limits.notificationsPerSecond) notifications a second"
            outcome.events.append(.rejected(.throttled, count: 1, detail: detail))
            return outcome
        }
        var measurement: HeartRateMeasurement
        do {
            measurement = try HeartRateMeasurement(decoding: notification.value)
        } catch {
            malformed += 1
            outcome.events.append(.malformed(payload: notification.value, error: error))
            return outcome
        }
        guard limits.heartRate.contains(measurement.heartRate) || measurement.heartRate == 0 else {
            let detail =
                "heart rate \(measurement.heartRate) bpm is outside \(limits.heartRate.lowerBound)–"
                + "\(limits.heartRate.upperBound) bpm: the notification was skipped"
            outcome.events.append(.rejected(.outOfRange, count: 1, detail: detail))
            return outcome
        }
        let sent = measurement.rrIntervals
        measurement.rrIntervals = sent.filter { limits.rrTicks.contains($0.ticks) }
        let implausibleIntervals = sent.count - measurement.rrIntervals.count
        notifications += 1
        let placement = timeline.place(
            measurement.rrIntervals,
            receivedAt: notification.receivedAt,
            latency: limits.beatLatency,
            firstWindow: limits.firstBeatsWindow
        )
        if !placement.isContinuous, !placement.beatTimes.isEmpty, notifications > 1 { gaps += 1 }
        outcome.isResumed = isStale
        isStale = false
        if measurement.isEnergyExpendedSaturated {
            outcome.requestsEnergyReset = !energyResetPending
            energyResetPending = true
        } else if measurement.energyExpended != nil {
            energyResetPending = false
        }
        let energy = measurement.energyExpended.map {
            notificationGuard.energy($0, at: notification.receivedAt, date: notification.receivedDate)
        }
        if implausibleIntervals > 0 {
            let detail = "RR intervals outside 200 ms–3 s were skipped"
            outcome.events.append(.rejected(.outOfRange, count: implausibleIntervals, detail: detail))
        }
        if placement.dropped > 0 {
            let detail = "beats adding up to more than the time since the previous notification were skipped"
            outcome.events.append(.rejected(.excessBeats, count: placement.dropped, detail: detail))
        }
        // Only the beats placed stay in the reading, so nothing downstream sees an interval that was left out.
        measurement.rrIntervals = Array(measurement.rrIntervals.suffix(placement.beatTimes.count))
        var increment: EnergyIncrement?
        switch energy {
        case .increment(let accepted): increment = accepted
        case .outOfRange(let kilojoules, let seconds):
            measurement.energyExpended = nil
            let detail =
                "an energy increase of \(Int(kilojoules)) kJ in \(String(format: "%.1f", seconds)) s is "
                + "more than a person can expend (\(limits.energyPerSecond) kJ/s); counting starts again"
            outcome.events.append(.rejected(.outOfRange, count: 1, detail: detail))
        case .baseline, nil: break
        }
        let beats = zip(measurement.rrIntervals, placement.beatTimes).map { interval, time in
            let offset = notification.receivedAt - time
            let seconds = Double(offset.components.seconds) + Double(offset.components.attoseconds) / 1e18
            return Beat(interval: interval, time: time, date: notification.receivedDate.addingTimeInterval(-seconds))
        }
        outcome.events.append(
            .reading(
                HeartRateReading(
                    sensor: sensor,
                    measurement: measurement,
                    receivedAt: notification.receivedAt,
                    receivedDate: notification.receivedDate,
                    beats: beats,
                    isContinuous: placement.isContinuous,
                    energy: increment
                )
            )
        )
        return outcome
    }

    /// The silence check at `now`: whether the sensor has just gone stale (silent for `staleIntervals` of its usual
    /// interval, or of `assumedInterval` before one is known), and when to check again.
    public mutating func checkSilence(
        at now: ContinuousClock.Instant,
        staleIntervals: Double,
        assumedInterval: Duration
    ) -> (becameStale: Bool, next: ContinuousClock.Instant) {
        let silence = (timeline.usualInterval ?? assumedInterval) * staleIntervals
        // Stale already: nothing to watch for until a notification comes (which ends the staleness).
        if isStale { return (false, now + silence) }
        let deadline = (lastReceived ?? now) + silence
        guard deadline <= now else { return (false, deadline) }
        isStale = true
        return (true, now + silence)
    }
}
