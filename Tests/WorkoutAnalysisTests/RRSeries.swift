import Foundation
import SystoleTestSupport
import WorkoutAnalysis

#if canImport(Glibc)
import Glibc
#endif

/// RR series for the HRV tests, deterministic for a seed: a heart at a steady rate with respiratory sinus
/// arrhythmia and beat-to-beat noise, and the artifacts a strap gives (ectopic, missed and extra beats).
struct RRSeries {
    /// A seeded generator, so a seed always gives the same series.
    typealias Random = SplitMix64

    enum Artifact: CaseIterable {
        /// A premature beat: the interval shortened to 65 %, the next lengthened by as much (compensatory pause).
        case ectopic
        /// A beat not seen: an interval and the next become one.
        case missed
        /// A beat that was not one: an interval split 45 : 55.
        case extra
    }

    /// `count` intervals (1/1024 s ticks) around `milliseconds`.
    static func clean(count: Int, milliseconds: Double, seed: UInt64) -> [UInt16] {
        var random = Random(seed: seed)
        var time = 0.0
        return (0..<count).map { _ in
            let base = milliseconds / 1000
            let wave = 1 + 0.04 * sin(2 * .pi * time / 4.5)
            let interval = base * wave + 0.015 * base * random.gaussian()
            time += interval
            return UInt16((interval * 1024).rounded())
        }
    }

    /// `ticks` with an artifact of each of `kinds` in turn about every `every` beats, away from the ends.
    static func withArtifacts(
        _ ticks: [UInt16],
        _ kinds: [Artifact],
        every: Int,
        seed: UInt64
    ) -> (ticks: [UInt16], injected: Int) {
        guard !kinds.isEmpty else { return (ticks, 0) }
        var random = Random(seed: seed)
        var result = ticks
        var injected = 0
        var position = every
        // From the end backwards, so that the positions still to come are not moved by a missed or extra beat.
        var places: [Int] = []
        while position + every / 4 < ticks.count - 10 {
            places.append(position + Int.random(in: -every / 4...every / 4, using: &random))
            position += every
        }
        for (number, place) in places.enumerated().reversed() {
            switch kinds[number % kinds.count] {
            case .ectopic:
                let short = UInt16((Double(result[place]) * 0.65).rounded())
                result[place + 1] += result[place] - short
                result[place] = short
            case .missed:
                result[place] += result[place + 1]
                result.remove(at: place + 1)
            case .extra:
                let first = UInt16((Double(result[place]) * 0.45).rounded())
                result.insert(first, at: place)
                result[place + 1] -= first
            }
            injected += 1
        }
        return (result, injected)
    }

    /// The beat positions NeuroKit is given: the running sums of the ticks, from 0.
    static func peaks(_ ticks: [UInt16]) -> [Int] {
        var peaks = [0]
        for tick in ticks { peaks.append(peaks[peaks.count - 1] + Int(tick)) }
        return peaks
    }

    /// The start of every test recording.
    static let start = Date(timeIntervalSince1970: 1_795_333_160)

    /// A recording of runs of beats, each run beginning `origins[i]` seconds after the start (its first interval
    /// begins then), every run after the first after a gap; it ends a second after the last beat.
    static func recording(
        _ runs: [[UInt16]],
        origins: [Double],
        pauses: [DateInterval] = []
    ) -> ActivityRecording {
        var beats: [ActivityRecording.Beat] = []
        for (number, (ticks, origin)) in zip(runs, origins).enumerated() {
            var sum = 0
            for (index, tick) in ticks.enumerated() {
                sum += Int(tick)
                beats.append(
                    .init(
                        date: start + origin + Double(sum) / 1024,
                        rrTicks: tick,
                        precededByGap: index == 0 && number > 0
                    )
                )
            }
        }
        return ActivityRecording(
            activity: .running,
            start: start,
            end: (beats.last?.date ?? start) + 1,
            pauses: pauses,
            beats: beats
        )
    }

    /// Origins for runs one after another, `gap` seconds apart.
    static func origins(_ runs: [[UInt16]], first: Double = 0.3, gap: Double = 5) -> [Double] {
        var origins: [Double] = []
        var next = first
        for ticks in runs {
            origins.append(next)
            next += Double(ticks.reduce(0) { $0 + Int($1) }) / 1024 + gap
        }
        return origins
    }

    /// RMSSD of the intervals as recorded, with no correction, successive differences within runs.
    static func uncorrectedRMSSD(_ runs: [[UInt16]]) -> Double {
        var sum = 0.0
        var count = 0
        for ticks in runs {
            for (a, b) in zip(ticks, ticks.dropFirst()) {
                let difference = (Double(b) - Double(a)) * 1000 / 1024
                sum += difference * difference
                count += 1
            }
        }
        return (sum / Double(count)).squareRoot()
    }
}

extension SplitMix64 {
    /// A standard normal value (Box–Muller).
    mutating func gaussian() -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
