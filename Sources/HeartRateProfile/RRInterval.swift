/// One RR interval (the time between two successive R waves) as the Heart Rate service sends it: a count of
/// 1/1024 s ticks.
///
/// The raw tick count is the source of truth; conversions are exact because 1/1024 and 1000/1024 (= 125/128)
/// are exact binary fractions, so a `Double` holds every converted value without rounding.
public struct RRInterval: Hashable, Sendable, Comparable {
    /// Ticks per second of the RR field.
    public static let ticksPerSecond = 1024

    /// Duration in 1/1024 s units, exactly as transmitted.
    public var ticks: UInt16

    /// Creates an interval from raw 1/1024 s ticks.
    public init(ticks: UInt16) {
        self.ticks = ticks
    }

    /// The interval in seconds (exact).
    public var seconds: Double { Double(ticks) / 1024 }

    /// The interval in milliseconds (exact: ticks × 125 / 128).
    public var milliseconds: Double { Double(ticks) * 125 / 128 }

    /// The interval as a `Duration` (exact: one tick is 976 562 500 000 000 attoseconds).
    public var duration: Duration {
        let whole = Int64(ticks >> 10)
        let fraction = Int64(ticks & 0x3FF)
        return Duration(secondsComponent: whole, attosecondsComponent: fraction * 976_562_500_000_000)
    }

    /// Whether the interval could come from a human heart: 200 ms (300 bpm) to 3 s (20 bpm).
    ///
    /// Sensors do send impossible values (a Garmin HRM-Dual has been seen sending 53 ticks ≈ 52 ms). The
    /// decoder keeps them as sent; consumers that build a beat timeline use this to flag them.
    public var isPhysiologicallyPlausible: Bool {
        Self.plausibleTicks.contains(ticks)
    }

    /// The ticks of intervals a human heart can produce: 205 (200.2 ms) to 3072 (3 s).
    public static let plausibleTicks: ClosedRange<UInt16> = 205...3072

    public static func < (lhs: RRInterval, rhs: RRInterval) -> Bool { lhs.ticks < rhs.ticks }
}
