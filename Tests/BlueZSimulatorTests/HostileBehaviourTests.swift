import Foundation
import HeartRateProfile
import Testing

@testable import BlueZSimulator

/// The hostile faults as payloads and schedules, decoded with HeartRateProfile's decoder (no bus, no clock).
@Suite struct HostileBehaviourTests {
    func fault(_ kind: Scenario.FaultSpec.Kind, at: Double, for duration: Double) -> Scenario.FaultSpec {
        Scenario.FaultSpec(kind, at: at, for: duration)
    }

    /// Plays `spec` at `rate` for `count` notifications, as the simulator's clock asks for them.
    func play(_ spec: Scenario.SensorSpec, rate: Double = 1, until end: Double) -> [(Double, [UInt8])] {
        var behaviour = SensorBehaviour(spec: spec, seed: 3)
        var played: [(Double, [UInt8])] = []
        var time = 0.0
        while true {
            time = behaviour.nextNotificationTime(after: time, rate: rate, phase: 0)
            guard time < end else { return played }
            played.append((time, behaviour.notification(at: time).payload))
        }
    }

    @Test func impossibleHeartRatesAreWellFormedWithTheFormatTheyNeed() throws {
        var spec = Scenario.SensorSpec(model: .polarH10)
        var fullScale = fault(.impossibleHeartRate, at: 3, for: 3)
        fullScale.bpm = 65535
        var fast = fault(.impossibleHeartRate, at: 6, for: 3)
        fast.bpm = 400
        var byte = fault(.impossibleHeartRate, at: 9, for: 3)
        byte.bpm = 254
        spec.faults = [fullScale, fast, byte]
        let played = try play(spec, until: 14).map { ($0.0, try HeartRateMeasurement(decoding: $0.1)) }
        for (time, measurement) in played {
            #expect(!measurement.isTruncated)
            switch time {
            case 3..<6: #expect(measurement.heartRate == 65535 && measurement.format == .uint16)
            case 6..<9: #expect(measurement.heartRate == 400 && measurement.format == .uint16)
            case 9..<12: #expect(measurement.heartRate == 254 && measurement.format == .uint8)
            default: #expect(measurement.heartRate < 100 && measurement.format == .uint8)
            }
            // RR intervals and contact go on as usual.
            #expect(measurement.sensorContact == .detected && !measurement.rrIntervals.isEmpty)
        }
        #expect(played.count == 13)
    }

    /// The issue's figures: at 4 Hz, 0 kJ then 65534 kJ a quarter of a second later, on every 3 s cycle: four
    /// jumps, 262 136 kJ, in 12 s.
    @Test func energyJumpsCycleBetweenZeroAndTheValue() throws {
        var spec = Scenario.SensorSpec(model: .polarH10)
        var jump = fault(.energyJump, at: 10, for: 12)
        jump.every = 12
        spec.faults = [jump]
        let played = try play(spec, rate: 4, until: 25).map { ($0.0, try HeartRateMeasurement(decoding: $0.1)) }
        let window = played.filter { jump.covers($0.0) }.map(\.1)
        #expect(window.count == 48)
        #expect(window.allSatisfy { !$0.isTruncated })
        let energies = window.map(\.energyExpended)
        #expect(energies.enumerated().allSatisfy { $0.element == ($0.offset % 12 == 0 ? 0 : 65534) })
        var gained = 0
        for (previous, next) in zip(energies, energies.dropFirst()) where next! > previous! {
            gained += Int(next!) - Int(previous!)
        }
        #expect(gained == 262_136)
        // A polar-h10 sends no energy field outside the window.
        #expect(played.filter { !jump.covers($0.0) }.allSatisfy { $0.1.energyExpended == nil })

        // Without `every`, cycles of two: 0, value, 0, value…
        var alternating = Scenario.SensorSpec(model: .garminHRM)
        var quick = fault(.energyJump, at: 0, for: 5)
        quick.value = 1000
        alternating.faults = [quick]
        let quickEnergies = try play(alternating, rate: 2, until: 5).map {
            try HeartRateMeasurement(decoding: $0.1).energyExpended
        }
        #expect(quickEnergies == [0, 1000, 0, 1000, 0, 1000, 0, 1000, 0])
    }

    /// 1000 notifications a second inside the window, each with 255 RR intervals (512 bytes: the flags, an 8-bit
    /// heart rate and 510 bytes of RR, within the 514 an ATT MTU of 517 leaves); the sensor's own schedule outside.
    @Test func aStormNotifiesAtItsRateWithValidPayloadsFullOfBeats() throws {
        var spec = Scenario.SensorSpec(model: .polarH10)
        spec.faults = [fault(.storm, at: 2, for: 1.5)]
        #expect(spec.effectiveMTU == 517)
        let played = play(spec, until: 6)
        let storm = played.filter { $0.0 >= 2 && $0.0 < 3.5 }
        #expect(storm.count == 1500)
        let own = played.map(\.0).filter { $0 < 2 || $0 >= 3.5 }
        #expect(own == [1.0, 4.0, 5.0])
        for (time, payload) in storm {
            #expect(payload.count == 512 && payload.count <= 517 - 3)
            let measurement = try HeartRateMeasurement(decoding: payload)
            #expect(payload[0] & 0x10 != 0, "RR present")
            #expect(measurement.format == .uint8 && !measurement.isTruncated)
            #expect(measurement.rrIntervals.count == 255)
            let beats = measurement.rrIntervals.reduce(0) { $0 + $1.seconds }
            #expect(beats > 200, "far more beats than the millisecond since the last notification at \(time)")
        }
        // On the storm's grid: 1 ms apart from its start.
        for (index, entry) in storm.enumerated() { #expect(abs(entry.0 - (2 + Double(index) / 1000)) < 1e-9) }

        // With a 16-bit heart rate during the storm, 255 intervals still fit (513 bytes).
        var both = spec
        var impossible = fault(.impossibleHeartRate, at: 2, for: 1)
        impossible.bpm = 400
        both.faults.append(impossible)
        let wide = try #require(play(both, until: 2.01).last)
        let measurement = try HeartRateMeasurement(decoding: wide.1)
        #expect(wide.1.count == 513 && measurement.heartRate == 400 && measurement.rrIntervals.count == 255)
    }

    @Test func hostileFaultsDecodeFromJSONAndAreCheckedWithTheirPlace() throws {
        let scenario = try JSONDecoder().decode(
            Scenario.self,
            from: Data(
                #"""
                {"sensors": [{"faults": [
                    {"kind": "impossible-heart-rate", "at": 1, "for": 2, "bpm": 400},
                    {"kind": "energy-jump", "at": 1, "for": 2, "value": 65534, "every": 12},
                    {"kind": "storm", "at": 1, "for": 2, "rate": 500, "rr": 100},
                    {"kind": "flap", "at": 1, "for": 2, "rate": 10}]}]}
                """#.utf8
            )
        )
        try scenario.validate()
        let faults = scenario.sensors[0].faults
        #expect(faults.map(\.kind) == [.impossibleHeartRate, .energyJump, .storm, .flap])
        #expect(faults[0].bpm == 400 && faults[1].value == 65534 && faults[1].every == 12)
        #expect(faults[2].effectiveRate == 500 && faults[2].rr == 100 && faults[3].effectiveRate == 10)
        let defaults = try JSONDecoder().decode(
            Scenario.FaultSpec.self,
            from: Data(#"{"kind": "storm", "at": 1, "for": 2}"#.utf8)
        )
        #expect(defaults.effectiveRate == 1000 && defaults.rr == 255 && defaults.bpm == 65535)
        #expect(defaults.value == 65534 && defaults.effectiveEvery == 2)

        func refusal(_ sensor: String) -> String? {
            do {
                let scenario = try JSONDecoder().decode(Scenario.self, from: Data(#"{"sensors": [\#(sensor)]}"#.utf8))
                try scenario.validate()
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(
            refusal(#"{"faults": [{"kind": "storm", "at": 1}]}"#)?.contains("faults[0]: a storm fault needs a window")
                == true
        )
        #expect(refusal(#"{"faults": [{"kind": "storm", "at": 1, "for": 1, "bpm": 3, "ratee": 1}]}"#) != nil)
        #expect(
            refusal(#"{"mtu": 23, "faults": [{"kind": "storm", "at": 1, "for": 1}]}"#)?
                .contains("255 RR intervals do not fit a notification at an ATT MTU of 23") == true
        )
        #expect(refusal(#"{"mtu": 247, "faults": [{"kind": "storm", "at": 1, "for": 1, "rr": 120}]}"#) == nil)
        #expect(refusal(#"{"faults": [{"kind": "storm", "at": 1, "for": 1, "rr": 256}]}"#)?.contains("rr") == true)
        #expect(refusal(#"{"faults": [{"kind": "flap", "at": 1, "for": 1, "rate": 1000}]}"#) != nil)
        #expect(refusal(#"{"faults": [{"kind": "energy-jump", "at": 1, "for": 1, "every": 1}]}"#) != nil)
        #expect(refusal(#"{"mtu": 600}"#)?.contains("mtu") == true)
    }

    /// Any string JSON can carry is played, except NUL, which no D-Bus string can hold: refused, with its place.
    @Test func hostileNamesDecodeAndOnlyNULIsRefused() throws {
        let long = String(repeating: "A", count: 10_000)
        let scenario = try JSONDecoder().decode(
            Scenario.self,
            from: Data(
                #"""
                {"sensors": [{"name": "\u001b]0;owned\u0007\u001b[2J\rPolar\nH10\u0008\u007f\u009b",
                              "gapName": "\#(long)"}],
                 "adapters": [{"alias": "\u001b[5mhci"}]}
                """#.utf8
            )
        )
        try scenario.validate()
        #expect(scenario.sensors[0].name == "\u{1B}]0;owned\u{07}\u{1B}[2J\rPolar\nH10\u{08}\u{7F}\u{9B}")
        #expect(scenario.sensors[0].gapName?.count == 10_000)
        for json in [
            #"{"sensors": [{"name": "Polar\u0000H10"}]}"#, #"{"sensors": [{"gapName": "\u0000"}]}"#,
            #"{"adapters": [{"alias": "a\u0000"}]}"#,
        ] {
            let refused = #expect(throws: Scenario.Invalid.self) {
                try JSONDecoder().decode(Scenario.self, from: Data(json.utf8)).validate()
            }
            #expect(refused?.description.contains("contains NUL") == true)
        }
        let place = #expect(throws: Scenario.Invalid.self) {
            try JSONDecoder().decode(Scenario.self, from: Data(#"{"sensors": [{}, {"name": "\u0000"}]}"#.utf8))
                .validate()
        }
        #expect(place?.description.hasPrefix("sensors[1].name") == true)
    }

    @Test func theHostileNeighbourPresetIsValidAndRoundTripsAsJSON() throws {
        let preset = Scenario.hostileNeighbour
        try preset.validate()
        #expect(preset.sensors.map(\.address) == [Scenario.honestStrapAddress, Scenario.hostileDeviceAddress])
        #expect(
            preset.sensors[1].faults.map(\.kind) == [
                .impossibleHeartRate, .impossibleHeartRate, .energyJump, .storm, .flap,
            ]
        )
        let json = try JSONEncoder().encode(preset)
        #expect(try JSONDecoder().decode(Scenario.self, from: json) == preset)
        #expect(Scenario.Preset(rawValue: "hostile-neighbour")?.scenario == preset)
    }
}
