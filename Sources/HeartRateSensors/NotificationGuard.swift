import BlueZ
import Foundation
import HeartRateProfile

/// Energy a sensor reported since its previous report, once the cumulative counter has been checked.
public struct EnergyIncrement: Sendable, Hashable {
    /// kJ expended since `since`.
    public var kilojoules: Double
    /// When the previous counter value arrived.
    public var since: Date

    public init(kilojoules: Double, since: Date) {
        self.kilojoules = kilojoules
        self.since = since
    }
}

/// One sensor's checks on what it sends, kept between notifications: the rate bound (a token bucket) and the
/// energy counter's last value. A value type, so the rules can be tested without a radio; ``HeartRateSensor`` keeps
/// one per sensor.
public struct NotificationGuard: Sendable {
    public let limits: RadioLimits
    private var tokens: Double
    private var lastRefill: ContinuousClock.Instant?
    private var energy: (value: UInt16, at: ContinuousClock.Instant, date: Date)?

    public init(limits: RadioLimits = RadioLimits()) {
        self.limits = limits
        tokens = limits.notificationBurst
    }

    /// Whether a notification arriving at `now` is within the sensor's rate bound; one beyond it is throttled.
    public mutating func admit(at now: ContinuousClock.Instant) -> Bool {
        if let lastRefill {
            let elapsed = now - lastRefill
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(limits.notificationBurst, tokens + max(0, seconds) * limits.notificationsPerSecond)
        }
        lastRefill = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// The outcome of a cumulative energy value.
    public enum EnergyOutcome: Sendable, Hashable {
        /// The first value (of the connection): nothing to add yet.
        case baseline
        /// A plausible increment (possibly 0 kJ).
        case increment(EnergyIncrement)
        /// More than a person can expend in the time that passed: left out, and the count starts again from
        /// this value.
        case outOfRange(kilojoules: Double, seconds: Double)
    }

    /// Takes the counter's value `value` (kJ since the sensor's last reset, saturating at 65535) received at
    /// `now`/`date`. A value below the previous one is a reset: it counts from zero.
    public mutating func energy(
        _ value: UInt16,
        at now: ContinuousClock.Instant,
        date: Date
    ) -> EnergyOutcome {
        defer { energy = (value, now, date) }
        guard let previous = energy else { return .baseline }
        let added = Double(value >= previous.value ? value - previous.value : value)
        let elapsed = now - previous.at
        let seconds = max(0, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        guard added <= limits.energyPerSecond * seconds + limits.energySlack else {
            return .outOfRange(kilojoules: added, seconds: seconds)
        }
        return .increment(EnergyIncrement(kilojoules: added, since: previous.date))
    }

    /// A new connection: the energy counter starts a new baseline. The rate bound carries on, so a device that
    /// reconnects again and again gains no notifications by it.
    public mutating func newConnection() {
        energy = nil
    }
}
