import Testing
import WorkoutAnalysis

struct AthleteProfileTests {
    @Test func maximumHeartRateIsConfiguredElseTanakasEstimateElseADefault() {
        #expect(AthleteProfile(age: 40, maxHeartRate: 181).effectiveMaxHeartRate.value == 181)
        #expect(AthleteProfile(age: 40, maxHeartRate: 181).effectiveMaxHeartRate.source == .configured)
        let estimated = AthleteProfile(age: 40).effectiveMaxHeartRate
        #expect(estimated.value == 180)
        #expect("\(estimated.source)" == "estimated: 208 − 0.7 × age")
        #expect(AthleteProfile().effectiveMaxHeartRate.value == 190)
        #expect("\(AthleteProfile().effectiveMaxHeartRate.source)".hasPrefix("default:"))
    }

    @Test func valuesOutsideTheirRangesAreNamed() {
        #expect(AthleteProfile(age: 5).problem == "age 5 is outside 10...100")
        #expect(AthleteProfile(weightKilograms: 0).problem?.hasPrefix("weight_kg") == true)
        #expect(AthleteProfile(restingHeartRate: 80, maxHeartRate: 95).problem?.hasPrefix("max_hr 95.0") == true)
        #expect(AthleteProfile(restingHeartRate: 100, maxHeartRate: 110).problem?.contains("at least 20") == true)
        #expect(AthleteProfile(age: 35, sex: .female, weightKilograms: 60).problem == nil)
    }
}
