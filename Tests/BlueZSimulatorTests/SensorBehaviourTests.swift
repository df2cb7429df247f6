import HeartRateProfile
import Testing

@testable import BlueZSimulator

@Suite struct SensorBehaviourTests {
    func payloads(
        _ spec: Scenario.SensorSpec,
        seed: UInt64 = 1,
        count: Int = 60,
        rate: Double = 1
    ) -> [SensorBehaviour.Notification] {
        var behaviour = SensorBehaviour(spec: spec, seed: seed)
        return (1...count).map { behaviour.notification(at: Double($0) / rate) }
    }

    func decoded(_ notifications: [SensorBehaviour.Notification]) throws -> [HeartRateMeasurement] {
        try notifications.map { try HeartRateMeasurement(decoding: $0.payload) }
    }

    @Test func theSameSeedPlaysTheSamePayloads() {
        let spec = Scenario.SensorSpec(model: .polarH10)
        #expect(payloads(spec, seed: 42).map(\.payload) == payloads(spec, seed: 42).map(\.payload))
        #expect(payloads(spec, seed: 42).map(\.payload) != payloads(spec, seed: 43).map(\.payload))
    }

    @Test func rrIntervalsVaryRealisticallyAroundTheTargetRate() throws {
        var spec = Scenario.SensorSpec(model: .polarH10)
        spec.profile.bpm = 60
        let measurements = try decoded(payloads(spec, count: 120))
        let intervals = measurements.flatMap(\.rrIntervals).map(\.seconds)
        let mean = intervals.reduce(0, +) / Double(intervals.count)
        #expect(abs(mean - 1) < 0.03)
        #expect(Set(intervals).count > intervals.count / 2, "beat-to-beat variability")
        #expect(intervals.allSatisfy { $0 > 0.9 && $0 < 1.1 })
        #expect(measurements.allSatisfy { $0.sensorContact == .detected && $0.energyExpended == nil })
        #expect(measurements.allSatisfy { (57...63).contains($0.heartRate) })
    }

    @Test func profilesShapeTheHeartRate() throws {
        var ramp = Scenario.SensorSpec()
        ramp.profile = Scenario.ProfileSpec(kind: .ramp)
        ramp.profile.from = 80
        ramp.profile.to = 160
        ramp.profile.duration = 60
        let rising = try decoded(payloads(ramp, count: 70)).map(\.heartRate)
        #expect(rising.first.map { (78...85).contains($0) } == true)
        #expect(rising.last.map { (155...165).contains($0) } == true)

        var intervals = Scenario.SensorSpec()
        intervals.profile = Scenario.ProfileSpec(kind: .intervals)
        intervals.profile.work = 10
        intervals.profile.rest = 10
        let rates = try decoded(payloads(intervals, count: 40)).map(\.heartRate)
        #expect(rates[5] > 160 && rates[15] < 120 && rates[25] > 160)
    }

    @Test func modelsSendTheirOwnFields() throws {
        let garmin = try decoded(payloads(Scenario.SensorSpec(model: .garminHRM), count: 30))
        #expect(garmin.enumerated().allSatisfy { ($0.element.energyExpended != nil) == ($0.offset % 10 == 0) })
        #expect(garmin.allSatisfy { $0.sensorContact == .notSupported })
        let beats = try decoded(payloads(Scenario.SensorSpec(model: .powerbeatsPro2), count: 10, rate: 0.2))
        #expect(beats.allSatisfy { $0.rrIntervals.isEmpty && $0.energyExpended == nil })
    }

    @Test func faultsShowInThePayloads() throws {
        var spec = Scenario.SensorSpec(model: .polarH10)
        spec.faults = [
            Scenario.FaultSpec(.contactLoss, at: 10, for: 5), Scenario.FaultSpec(.malformed, at: 30, every: 5),
            Scenario.FaultSpec(.drop, at: 40, for: 3),
        ]
        let notifications = payloads(spec, count: 50)
        let lost = try decoded(Array(notifications[10..<14]))
        #expect(lost.allSatisfy { $0.sensorContact == .notDetected && $0.rrIntervals.isEmpty })
        let malformed = notifications.enumerated().filter(\.element.malformed).map(\.offset)
        #expect(malformed == [29, 34, 39, 44, 49])
        for index in malformed {
            #expect(throws: HeartRateMeasurement.DecodingError.self) {
                try HeartRateMeasurement(decoding: notifications[index].payload)
            }
        }
        #expect(notifications.enumerated().filter(\.element.dropped).map(\.offset) == [39, 40, 41])
    }

    @Test func energySaturatesAndResets() throws {
        var spec = Scenario.SensorSpec(model: .garminHRM)
        spec.energyStart = 65_530
        var behaviour = SensorBehaviour(spec: spec, seed: 1)
        var energies: [UInt16] = []
        for second in 1...60 {
            let measurement = try HeartRateMeasurement(decoding: behaviour.notification(at: Double(second)).payload)
            if let energy = measurement.energyExpended { energies.append(energy) }
        }
        #expect(energies.last == 65_535)
        behaviour.resetEnergyExpended()
        var after: UInt16?
        for second in 61...80 {
            let measurement = try HeartRateMeasurement(decoding: behaviour.notification(at: Double(second)).payload)
            after = measurement.energyExpended ?? after
        }
        #expect(after.map { $0 < 10 } == true)
    }
}
