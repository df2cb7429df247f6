#if canImport(Glibc)
import Glibc
#endif

/// Zero-phase filters for a sampled ECG: what is removed before R-peaks are looked for.
///
/// As NeuroKit2's default cleaning does: slow drift and the DC offset off with a Butterworth high-pass at 0.5 Hz,
/// then mains hum with a moving average one mains period wide (two samples below 100 Hz). Each runs forward and
/// backward, so nothing is shifted in time, over the signal padded at both ends by its own odd reflection.
public enum ECGFilter {
    /// The cleaned signal, as long as `signal`.
    public static func clean(_ signal: [Double], rate: Double, mainsFrequency: Double = 50) -> [Double] {
        guard signal.count > 3 else { return signal }
        let highPassed = zeroPhase(signal, padding: Int(3 * rate)) { highPass($0, cutoff: 0.5, rate: rate) }
        let width = rate >= 100 ? max(1, Int(rate / mainsFrequency)) : 2
        return zeroPhase(highPassed, padding: 3 * width) { movingAverage($0, width: width) }
    }

    /// Runs `filter` forward, then backward, over `signal` padded by its odd reflection.
    static func zeroPhase(_ signal: [Double], padding: Int, _ filter: ([Double]) -> [Double]) -> [Double] {
        let pad = min(padding, signal.count - 1)
        let first = signal[0]
        let last = signal[signal.count - 1]
        let head = (1...max(pad, 1)).prefix(pad).reversed().map { 2 * first - signal[$0] }
        let tail = (1...max(pad, 1)).prefix(pad).map { 2 * last - signal[signal.count - 1 - $0] }
        let padded = head + signal + tail
        let backward = filter(Array(filter(padded).reversed())).reversed()
        return Array(Array(backward)[pad..<(pad + signal.count)])
    }

    /// A second-order Butterworth high-pass (bilinear transform), started from rest at the first sample's level.
    static func highPass(_ signal: [Double], cutoff: Double, rate: Double) -> [Double] {
        let omega = 2 * Double.pi * cutoff / rate
        let alpha = sin(omega) / (2 * 0.5.squareRoot())
        let a0 = 1 + alpha
        let b0 = (1 + cos(omega)) / 2 / a0
        let b1 = -(1 + cos(omega)) / a0
        let b2 = b0
        let a1 = -2 * cos(omega) / a0
        let a2 = (1 - alpha) / a0
        var output = [Double](repeating: 0, count: signal.count)
        // At rest on a constant input the output is 0: start as if the first value had always been there.
        var (x1, x2, y1, y2) = (signal.first ?? 0, signal.first ?? 0, 0.0, 0.0)
        for (index, x) in signal.enumerated() {
            let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            output[index] = y
            (x2, x1, y2, y1) = (x1, x, y1, y)
        }
        return output
    }

    /// The mean of each sample and the `width - 1` before it (the first samples repeat the first value).
    static func movingAverage(_ signal: [Double], width: Int) -> [Double] {
        guard width > 1 else { return signal }
        var output = [Double](repeating: 0, count: signal.count)
        var sum = signal[0] * Double(width)
        for index in signal.indices {
            sum += signal[index] - signal[max(0, index - width)]
            output[index] = sum / Double(width)
        }
        return output
    }
}
