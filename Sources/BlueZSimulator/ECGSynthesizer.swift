#if canImport(Glibc)
import Glibc
#endif

/// A single-lead ECG drawn around given R-peaks, in µV: P, Q, R, S and T waves as Gaussian bumps placed relative to
/// each beat (P and T further out at slower rates, as the QT interval lengthens), a slow baseline wander, and
/// noise. A sample's value depends only on its time, the beats and its index, so replays are exact.
///
/// The R wave's peak sits on the beat's time: the simulator's RR intervals over 0x2A37 are the times between the
/// same beats, which is what lets a test hold R-peaks detected from the ECG against them.
struct ECGSynthesizer: Sendable {
    /// Standard deviation of the noise, µV.
    let noise: Double
    let seed: UInt64

    /// (offset from the R-peak in seconds, scaled by √RR; width in seconds; amplitude in µV)
    private static let waves: [(offset: Double, scales: Bool, width: Double, amplitude: Double)] = [
        (-0.20, true, 0.025, 120),  // P
        (-0.03, false, 0.010, -150),  // Q
        (0, false, 0.011, 1100),  // R
        (0.03, false, 0.010, -300),  // S
        (0.28, true, 0.050, 320),  // T
    ]

    /// The value at `time` (seconds), sample `index` of the stream, given R-peak times around it (ascending).
    func microvolts(at time: Double, index: Int, rPeaks: [Double]) -> Int32 {
        var value = 40 * sin(2 * .pi * 0.25 * time)
        // Only beats within a second either side shape this sample.
        let low = rPeaks.partitionIndex { $0 >= time - 1 }
        var position = low
        while position < rPeaks.count, rPeaks[position] <= time + 1 {
            let peak = rPeaks[position]
            let interval = position + 1 < rPeaks.count ? rPeaks[position + 1] - peak : 0.8
            let stretch = min(max(interval, 0.3), 2).squareRoot()
            for wave in Self.waves {
                let centre = peak + (wave.scales ? wave.offset * stretch : wave.offset)
                let distance = (time - centre) / wave.width
                if abs(distance) < 6 { value += wave.amplitude * exp(-0.5 * distance * distance) }
            }
            position += 1
        }
        value += noise * gaussian(index)
        return Int32(value.rounded())
    }

    /// A standard normal value that depends only on the seed and `index` (Box–Muller on two hashed uniforms).
    private func gaussian(_ index: Int) -> Double {
        var random = SeededRandom(seed: seed ^ UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15)
        return random.gaussian()
    }
}

extension Array where Element == Double {
    /// The first index whose element satisfies `belongs`, for an array ordered so that all that satisfy it come last.
    func partitionIndex(where belongs: (Double) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongs(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
