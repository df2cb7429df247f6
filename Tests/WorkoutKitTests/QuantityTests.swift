import Foundation
import Testing

@testable import WorkoutKit

@Suite struct QuantityTests {
    @Test func unitsConvertWithinTheirDimension() throws {
        #expect(try Quantity(4.184, .kilojoule).doubleValue(for: .kilocalorie) == 1)
        #expect(try abs(Quantity(100, .kilocalorie).doubleValue(for: .kilojoule) - 418.4) < 1e-9)
        #expect(try Quantity(0.5, .liter).doubleValue(for: .milliliter) == 500)
        #expect(throws: Quantity.IncompatibleUnit(from: .milliliter, to: .kilojoule)) {
            try Quantity(1, .milliliter).doubleValue(for: .kilojoule)
        }
        #expect(Unit(symbol: "kcal") == .kilocalorie)
        #expect(Unit(symbol: "furlong") == nil)
    }

    @Test func typesKnowHowTheyAggregate() {
        #expect(QuantityType.heartRate.aggregationStyle == .discrete)
        #expect(QuantityType.activeEnergyBurned.aggregationStyle == .cumulative)
        #expect(QuantityType.dietaryWater.canonicalUnit == .milliliter)
        #expect(SampleType(identifier: "heartbeatSeries") == .heartbeatSeries)
        #expect(SampleType(identifier: "dietaryWater") == .dietaryWater)
        #expect(WorkoutActivityType(name: "hiit") == .highIntensityIntervalTraining)
        #expect(WorkoutActivityType.running.rawValue == 37, "HealthKit's raw value")
        #expect(WorkoutSessionLocationType.outdoor.rawValue == 3)
    }
}

@Suite struct RandomUUIDTests {
    @Test func randomUUIDsAreVersionFourAndDoNotRepeat() {
        let ids = (0..<10_000).map { _ in UUID.random() }
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(500) {
            let text = id.uuidString
            // xxxxxxxx-xxxx-4xxx-[89AB]xxx-xxxxxxxxxxxx
            #expect(Array(text)[14] == "4")
            #expect("89AB".contains(Array(text)[19]))
        }
    }
}
