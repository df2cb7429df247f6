import Foundation

/// Banister's training impulse (TRIMP, 1991): each minute weighted by the heart-rate reserve it used and an
/// exponential factor for how much harder high intensity is, `Σ minutes × HRr × 0.64 × e^(k × HRr)`, with
/// HRr = (HR − resting) / (max − resting) kept within 0…1 and k = 1.92 for men, 1.67 for women, and their mean
/// (1.795) when the profile gives no sex. An hour at 75 % of reserve is about 100.
public enum TrainingLoad {
    /// The exponent's factor for a sex (nil: the mean of the two).
    public static func factor(for sex: AthleteProfile.Sex?) -> Double {
        switch sex {
        case .male: 1.92
        case .female: 1.67
        case nil: (1.92 + 1.67) / 2
        }
    }

    /// The recording's TRIMP for the profile (pauses excluded).
    public static func trimp(_ recording: ActivityRecording, profile: AthleteProfile) -> Double {
        let resting = profile.effectiveRestingHeartRate.value
        let reserve = profile.effectiveMaxHeartRate.value - resting
        guard reserve > 0 else { return 0 }
        let k = factor(for: profile.sex)
        var total = 0.0
        for (bpm, seconds) in recording.readingDurations() {
            let fraction = min(1, max(0, (bpm - resting) / reserve))
            total += seconds / 60 * fraction * 0.64 * exp(k * fraction)
        }
        return total
    }
}
