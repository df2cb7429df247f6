import BlueZ
import HeartRateProfile

/// What a heart-rate sensor can plausibly send, from human physiology and the Heart Rate Service. Anyone within
/// radio range decides what their device says, so a value outside these limits is not a reading: it is counted as
/// rejected and left out of everything downstream (the store, statistics, the live log, exports).
public struct RadioLimits: Sendable, Equatable {
    /// Heart rates a person can have: 25 bpm (below an athlete's resting rate asleep) to 250 bpm (above the
    /// maximum of any age, about 220 − age, with room for arrhythmias). 0 is the sensor saying it has no value.
    public var heartRate: ClosedRange<UInt16> = 25...250
    /// RR intervals a heart can produce: 200 ms (300 bpm) to 3 s (20 bpm), as ``RRInterval/isPhysiologicallyPlausible``.
    public var rrTicks = RRInterval.plausibleTicks
    /// The most energy a person can expend per second, in kJ: 2.5 kJ/s is 2.5 kW, beyond an elite cyclist's
    /// whole-body rate at full effort (about 1.5–2 kW).
    public var energyPerSecond: Double = 2.5
    /// Allowance on top of the rate, in kJ: the counter moves in whole kJ and sensors report it irregularly.
    public var energySlack: Double = 10
    /// How far beats may reach back before the sensor's previous notification, for radio latency.
    public var beatLatency: Duration = .milliseconds(250)
    /// How far the beats of a sensor's first notification may reach back (it may carry beats from before the
    /// subscription).
    public var firstBeatsWindow: Duration = .seconds(3)
    /// Notifications per second a sensor may send on average. Sensors notify about once a second, some once a
    /// beat (up to about 4 a second); three times that is no heart-rate sensor.
    public var notificationsPerSecond: Double = 12
    /// How many notifications may arrive at once above the rate (the radio delivers delayed ones together).
    public var notificationBurst: Double = 24

    public init() {}
}

/// Why a value from a sensor was not taken.
public enum RejectionReason: String, Sendable, Hashable, CaseIterable {
    /// Not a valid Heart Rate Measurement.
    case malformed
    /// A heart rate, RR interval or energy increment outside ``RadioLimits``.
    case outOfRange
    /// Beats that add up to more than the time that passed: they would be back-dated.
    case excessBeats
    /// Notifications beyond the sensor's rate bound.
    case throttled
}
