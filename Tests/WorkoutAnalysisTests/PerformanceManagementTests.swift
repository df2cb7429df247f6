import Foundation
import Testing

@testable import WorkoutAnalysis

/// Fitness, fatigue and form: one hard day after rest, then rest again, against the model's closed form.
@Suite struct PerformanceManagementTests {
    @Test func oneDaysLoadRaisesFitnessAndFatigueAndLowersTomorrowsFormAsTheModelSays() {
        let days = PerformanceManagement.days(loads: [0, 0, 100] + Array(repeating: 0, count: 42))
        #expect(days[1] == .init(load: 0, fitness: 0, fatigue: 0, form: 0))
        let fitness = 100 * (1 - exp(-1 / 42.0))
        let fatigue = 100 * (1 - exp(-1 / 7.0))
        #expect(abs(days[2].fitness - fitness) < 1e-12 && abs(days[2].fatigue - fatigue) < 1e-12)
        // Today's training leaves today's form alone; tomorrow's is yesterday's fitness less its fatigue.
        #expect(days[2].form == 0)
        #expect(abs(days[3].form - (fitness - fatigue)) < 1e-12)
        // Each time constant later, what is left is 1/e of it.
        #expect(abs(days[2 + 42].fitness - fitness / M_E) < 1e-9)
        #expect(abs(days[2 + 7].fatigue - fatigue / M_E) < 1e-9)
        // Fatigue forgets faster: six weeks on, form is back above zero.
        #expect(days.last!.form > 0)
    }
}
