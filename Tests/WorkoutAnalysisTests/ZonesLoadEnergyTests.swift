import Foundation
import Testing
import WorkoutAnalysis

/// Zones, TRIMP and Keytel's estimate on recordings whose answers can be worked out by hand.
struct ZonesLoadEnergyTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)

    /// A reading a second at `bpm(second)` for `seconds`, with optional pauses.
    static func recording(seconds: Int, pauses: [DateInterval] = [], bpm: (Int) -> Double) -> ActivityRecording {
        ActivityRecording(
            activity: .running,
            start: start,
            end: start + Double(seconds),
            pauses: pauses,
            readings: (0..<seconds).map { .init(date: start + Double($0), bpm: bpm($0)) }
        )
    }

    @Test func zonesArePercentagesOfMaximumOrOfTheReserve() {
        let byMaximum = HeartRateZones(profile: AthleteProfile(maxHeartRate: 200))
        #expect(byMaximum.zones.map(\.lower) == [100, 120, 140, 160, 180])
        #expect(byMaximum.zones.map(\.upper) == [120, 140, 160, 180, nil])
        let byReserve = HeartRateZones(
            profile: AthleteProfile(restingHeartRate: 50, maxHeartRate: 190, zoneBasis: .heartRateReserve)
        )
        // 50 + 140 × 50 % = 120, and so on.
        #expect(byReserve.zones.map(\.lower) == [120, 134, 148, 162, 176])
    }

    @Test func timeInZonesCountsEachReadingUntilTheNextAndLeavesPausesOut() {
        // 10 minutes: 2 below zone 1 (90), 3 in zone 2 (130), 5 in zone 5 (185); a minute of zone 2 is paused.
        let pause = DateInterval(start: Self.start + 180, duration: 60)
        let recording = Self.recording(seconds: 600, pauses: [pause]) { second in
            second < 120 ? 90 : second < 300 ? 130 : 185
        }
        let zones = HeartRateZones(recording, profile: AthleteProfile(maxHeartRate: 200))
        #expect(zones.secondsBelow == 120)
        #expect(zones.zones.map(\.seconds) == [0, 120, 0, 0, 300])
        #expect(zones.totalSeconds == 540)
    }

    @Test func aSilenceLongerThanFiveSecondsIsNotTimeAtTheLastHeartRate() {
        var recording = Self.recording(seconds: 60) { _ in 150 }
        recording.readings.removeSubrange(10..<50)  // 40 s without a reading: lost signal
        let zones = HeartRateZones(recording, profile: AthleteProfile(maxHeartRate: 200))
        // Nine readings a second each, the tenth five seconds, then the ten after the silence.
        #expect(zones.totalSeconds == 9 + 5 + 10)
    }

    @Test func banistersTRIMPForAnHourAtThreeQuartersOfTheReserve() {
        // HRr = (145 − 50) / (176.67 − 50) is awkward; choose max 190, resting 50: HR 155 → HRr 0.75.
        let profile = AthleteProfile(sex: .male, restingHeartRate: 50, maxHeartRate: 190)
        let hour = Self.recording(seconds: 3600) { _ in 155 }
        // 60 × 0.75 × 0.64 × e^(1.92 × 0.75) = 28.8 × 4.220696 = 121.556
        #expect(abs(TrainingLoad.trimp(hour, profile: profile) - 121.556) < 0.01)
        var female = profile
        female.sex = .female
        // 28.8 × e^(1.67 × 0.75) = 28.8 × 3.499119 = 100.775
        #expect(abs(TrainingLoad.trimp(hour, profile: female) - 100.775) < 0.01)
        // Below resting counts nothing; above maximum counts as the maximum.
        let easy = Self.recording(seconds: 600) { _ in 45 }
        #expect(TrainingLoad.trimp(easy, profile: profile) == 0)
    }

    @Test func keytelsEquationsPerMinuteAndOverAWorkout() {
        // Man, 30, 70 kg, 150 bpm: −55.0969 + 94.635 + 13.916 + 6.051 = 59.505 kJ/min.
        #expect(
            abs(EnergyEstimate.kilojoulesPerMinute(bpm: 150, age: 30, weightKilograms: 70, sex: .male) - 59.505)
                < 0.001
        )
        // Woman, 30, 60 kg, 150 bpm: −20.4022 + 67.08 − 7.578 + 2.22 = 41.3198 kJ/min.
        #expect(
            abs(EnergyEstimate.kilojoulesPerMinute(bpm: 150, age: 30, weightKilograms: 60, sex: .female) - 41.3198)
                < 0.001
        )
        // A resting heart rate gives no negative energy.
        #expect(EnergyEstimate.kilojoulesPerMinute(bpm: 40, age: 20, weightKilograms: 50, sex: .male) == 0)
        let halfHour = Self.recording(seconds: 1800) { _ in 150 }
        let profile = AthleteProfile(age: 30, sex: .male, weightKilograms: 70)
        let kilojoules = try! #require(EnergyEstimate.kilojoules(halfHour, profile: profile))
        #expect(abs(kilojoules - 30 * 59.505) < 0.1)
    }

    @Test func noEstimateWithoutAgeAndWeightAndTheReasonSaysWhatToSet() {
        let recording = Self.recording(seconds: 60) { _ in 150 }
        #expect(EnergyEstimate.kilojoules(recording, profile: AthleteProfile(age: 30)) == nil)
        #expect(EnergyEstimate.unavailableReason(AthleteProfile(age: 30))?.contains("weight_kg") == true)
        #expect(EnergyEstimate.unavailableReason(AthleteProfile(weightKilograms: 70))?.contains("age") == true)
    }
}
