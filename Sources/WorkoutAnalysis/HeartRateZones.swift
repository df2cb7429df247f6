/// Five heart-rate zones and the time a workout spent in each, as Garmin Connect and Polar Flow show them: zone 1
/// from 50 %, then 60, 70, 80 and 90 % of maximum heart rate, or of the heart-rate reserve above resting
/// (Karvonen), as the profile chooses. Time below zone 1 is counted apart; pauses are left out.
public struct HeartRateZones: Sendable, Equatable {
    /// One zone: its number (1 to 5), its bounds in bpm (`upper` nil for zone 5), and the time in it.
    public struct Zone: Sendable, Equatable {
        public var number: Int
        public var lower: Double
        public var upper: Double?
        public var seconds: Double
    }

    /// The zones' lower bounds, in percent of the basis.
    public static let percentages: [Double] = [50, 60, 70, 80, 90]

    public var basis: AthleteProfile.ZoneBasis
    public var zones: [Zone]
    /// Seconds below zone 1.
    public var secondsBelow: Double

    /// The zones of a profile, with no time yet.
    public init(profile: AthleteProfile) {
        let basis = profile.effectiveZoneBasis.value
        self.basis = basis
        let maximum = profile.effectiveMaxHeartRate.value
        let resting = profile.effectiveRestingHeartRate.value
        let lowers = Self.percentages.map { percent in
            switch basis {
            case .maxHeartRate: maximum * percent / 100
            case .heartRateReserve: resting + (maximum - resting) * percent / 100
            }
        }
        zones = lowers.enumerated().map { index, lower in
            Zone(number: index + 1, lower: lower, upper: index + 1 < lowers.count ? lowers[index + 1] : nil, seconds: 0)
        }
        secondsBelow = 0
    }

    /// The time a recording spent in each zone.
    public init(_ recording: ActivityRecording, profile: AthleteProfile) {
        self.init(profile: profile)
        for (bpm, seconds) in recording.readingDurations() {
            if let index = zones.lastIndex(where: { bpm >= $0.lower }) {
                zones[index].seconds += seconds
            } else {
                secondsBelow += seconds
            }
        }
    }

    /// Seconds in zone 2 and above: what the daily summary's zone minutes count.
    public var secondsFromZone2: Double { zones.dropFirst().reduce(0) { $0 + $1.seconds } }

    /// Seconds in zones and below them: the workout's time with heart rate.
    public var totalSeconds: Double { zones.reduce(secondsBelow) { $0 + $1.seconds } }
}
