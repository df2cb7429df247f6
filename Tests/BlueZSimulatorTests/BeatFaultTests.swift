import Foundation
import HeartRateProfile
import Testing

@testable import BlueZSimulator

/// Ectopic and missed beats: the RR intervals a sensor sends with them are the ones it sends without them, but for
/// the beats the faults change, and those change as a premature beat and a missed one do.
@Suite struct BeatFaultTests {
    /// The RR intervals (ticks) a sensor sends in `seconds` of notifications at 1 Hz.
    func intervals(_ spec: Scenario.SensorSpec, seconds: Int = 300) throws -> [UInt16] {
        var behaviour = SensorBehaviour(spec: spec, seed: 5)
        return try (1...seconds).flatMap { second in
            try HeartRateMeasurement(decoding: behaviour.notification(at: Double(second)).payload).rrIntervals
                .map(\.ticks)
        }
    }

    static func spec(_ faults: [Scenario.FaultSpec] = []) -> Scenario.SensorSpec {
        var spec = Scenario.SensorSpec(model: .polarH10)
        spec.profile.bpm = 75
        spec.faults = faults
        return spec
    }

    @Test func everyNthBeatIsPrematureWithItsCompensatoryPause() throws {
        let clean = try intervals(Self.spec())
        let faulted = try intervals(Self.spec([Scenario.FaultSpec(.ectopic, at: 30, every: 20)]))
        #expect(faulted.count == clean.count, "no beat added or lost")
        let changed = clean.indices.filter { clean[$0] != faulted[$0] }
        // Premature beats come in pairs: the short interval, then the long one making up for it.
        let premature = stride(from: 0, to: changed.count, by: 2).map { changed[$0] }
        #expect(changed.count == premature.count * 2)
        #expect(premature.count >= 15, "300 s at 75 bpm: about 18 premature beats from 30 s on")
        for index in premature {
            #expect(changed.contains(index + 1))
            let early = Double(clean[index]) * Scenario.FaultSpec.ectopicPrematurity
            #expect(abs(Double(faulted[index]) - (Double(clean[index]) - early)) <= 1, "beat \(index) early")
            #expect(abs(Double(faulted[index + 1]) - (Double(clean[index + 1]) + early)) <= 1, "pause \(index + 1)")
        }
        // Every 20th beat from 30 s on: 20 beats apart, the first the 20th beat after 30 s (37.5 beats in at 75 bpm).
        #expect(zip(premature, premature.dropFirst()).allSatisfy { $1 - $0 == 20 })
        #expect(premature.first.map { (55...58).contains($0) } == true, "\(premature)")
    }

    @Test func aMissedBeatIsSentAsTheSumOfTwoIntervals() throws {
        let clean = try intervals(Self.spec())
        let faulted = try intervals(Self.spec([Scenario.FaultSpec(.missedBeat, at: 30, for: 120, every: 25)]))
        // Walk both: where they part, the faulted interval is the clean one and the next together.
        var missed: [Int] = []
        var offset = 0
        for index in faulted.indices where index + offset < clean.count {
            if faulted[index] == clean[index + offset] { continue }
            let together = Int(clean[index + offset]) + Int(clean[index + offset + 1])
            #expect(abs(Int(faulted[index]) - together) <= 1, "interval \(index)")
            missed.append(index + offset)
            offset += 1
        }
        // 120 s at 75 bpm is 150 beats: six missed, 25 beats apart, and none after the window.
        #expect(missed.count == 6)
        #expect(zip(missed, missed.dropFirst()).allSatisfy { $1 - $0 == 25 })
        #expect(faulted.count == clean.count - missed.count)
    }

    @Test func theSameSeedPlaysTheSameFaults() throws {
        let spec = Self.spec([
            Scenario.FaultSpec(.ectopic, at: 0, every: 7), Scenario.FaultSpec(.missedBeat, at: 10, every: 11),
        ])
        #expect(try intervals(spec, seconds: 60) == intervals(spec, seconds: 60))
    }
}
