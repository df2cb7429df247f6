/// Finds R-peaks in a single-lead ECG, by the gradient method of NeuroKit2's `ecg_peaks` (Makowski et al., 2021;
/// after Nabian et al., 2018), written from its published description.
///
/// The cleaned signal's absolute gradient, smoothed over 0.1 s, marks a QRS complex where it exceeds 1.5 times its
/// own average over 0.75 s. Complexes shorter than 0.4 times the mean length are noise. In each complex the R-peak
/// is the most prominent local maximum; one closer than 0.3 s to the previous R-peak is left out.
///
/// One departure from the reference: within 0.75 s of either end of the signal, where the average is taken over
/// values extended past the end and so runs low, a complex is kept only if its R-peak stands at least half as
/// prominent as the signal's typical R-peak. A stream cut just before an R wave otherwise yields its P wave as a
/// beat, and a stream starting just after one its T wave: intervals 20 % short at every dropout.
public enum RPeakDetector {
    /// Rates the detector is meant for: ambulatory ECG from 50 Hz (the windows need a few samples) to 1 kHz.
    public static let rates: ClosedRange<Double> = 50...1000

    /// Sample indices of the R-peaks of `signal` (µV or any unit; a raw recording, cleaned here with
    /// ``ECGFilter/clean(_:rate:mainsFrequency:)``) sampled at `rate` Hz. Empty when the rate is outside ``rates``
    /// or the signal is shorter than a second.
    public static func peaks(in signal: [Double], rate: Double) -> [Int] {
        guard rates.contains(rate), Double(signal.count) >= rate else { return [] }
        return peaks(inCleaned: ECGFilter.clean(signal, rate: rate), rate: rate)
    }

    /// As ``peaks(in:rate:)`` for a signal already cleaned.
    public static func peaks(inCleaned signal: [Double], rate: Double) -> [Int] {
        guard rates.contains(rate), signal.count > 2 else { return [] }
        let gradient = absoluteGradient(signal)
        let smoothed = boxcar(gradient, size: roundedToEven(0.1 * rate))
        let average = boxcar(smoothed, size: roundedToEven(0.75 * rate))
        let minimumDelay = roundedToEven(0.3 * rate)
        var starts: [Int] = []
        var ends: [Int] = []
        for index in 0..<(signal.count - 1) {
            let inside = smoothed[index] > 1.5 * average[index]
            let nextInside = smoothed[index + 1] > 1.5 * average[index + 1]
            if !inside, nextInside { starts.append(index) }
            if inside, !nextInside { ends.append(index) }
        }
        guard let firstStart = starts.first else { return [] }
        ends.removeAll { $0 <= firstStart }
        let complexes = Array(zip(starts, ends))
        guard !complexes.isEmpty else { return [] }
        let minimumLength = Double(complexes.reduce(0) { $0 + $1.1 - $1.0 }) / Double(complexes.count) * 0.4
        var peaks: [(index: Int, prominence: Double)] = []
        for (start, end) in complexes where Double(end - start) >= minimumLength {
            guard let peak = mostProminentMaximum(signal, start..<end) else { continue }
            if peak.index - (peaks.last?.index ?? 0) > minimumDelay { peaks.append(peak) }
        }
        return withoutPartialComplexesAtTheEnds(peaks, count: signal.count, edge: roundedToEven(0.75 * rate))
    }

    /// `peaks` less those within `edge` samples of either end whose prominence is under half the median of the
    /// others (of all, when fewer than three lie inside).
    static func withoutPartialComplexesAtTheEnds(
        _ peaks: [(index: Int, prominence: Double)],
        count: Int,
        edge: Int
    ) -> [Int] {
        func nearAnEnd(_ index: Int) -> Bool { index < edge || index >= count - edge }
        let inside = peaks.filter { !nearAnEnd($0.index) }.map(\.prominence)
        let typical = median(inside.count >= 3 ? inside : peaks.map(\.prominence))
        return peaks.filter { !nearAnEnd($0.index) || $0.prominence >= typical / 2 }.map(\.index)
    }

    private static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }

    /// Rounds half to even, as the reference does for its window sizes (0.75 s at 130 Hz is 98 samples).
    static func roundedToEven(_ value: Double) -> Int { Int(value.rounded(.toNearestOrEven)) }

    /// |gradient|: central differences inside, one-sided at the ends.
    static func absoluteGradient(_ signal: [Double]) -> [Double] {
        let last = signal.count - 1
        return signal.indices.map { index in
            switch index {
            case 0: abs(signal[1] - signal[0])
            case last: abs(signal[last] - signal[last - 1])
            default: abs(signal[index + 1] - signal[index - 1]) / 2
            }
        }
    }

    /// The mean over a window of `size` samples around each (for an even size one more before than after), the
    /// ends extended by their nearest value.
    static func boxcar(_ signal: [Double], size: Int) -> [Double] {
        guard size > 1 else { return signal }
        let before = size / 2
        let after = size - 1 - before
        let count = signal.count
        func value(_ index: Int) -> Double { signal[min(max(index, 0), count - 1)] }
        var sum = (-before...after).reduce(0) { $0 + value($1) }
        var output = [Double](repeating: 0, count: count)
        for index in 0..<count {
            output[index] = sum / Double(size)
            sum += value(index + after + 1) - value(index - before)
        }
        return output
    }

    /// The index of the local maximum of `signal` in `range` whose prominence within the range is largest (the
    /// first of equals), with that prominence; a flat top counts at its middle.
    static func mostProminentMaximum(_ signal: [Double], _ range: Range<Int>) -> (index: Int, prominence: Double)? {
        let data = Array(signal[range])
        var best: (index: Int, prominence: Double)?
        var index = 1
        while index < data.count - 1 {
            guard data[index] > data[index - 1] else {
                index += 1
                continue
            }
            var plateauEnd = index
            while plateauEnd + 1 < data.count, data[plateauEnd + 1] == data[index] { plateauEnd += 1 }
            guard plateauEnd + 1 < data.count, data[plateauEnd + 1] < data[index] else {
                index = plateauEnd + 1
                continue
            }
            let peak = (index + plateauEnd) / 2
            let prominence = prominenceOf(data, peak: peak, height: data[index])
            if best == nil || prominence > best!.prominence { best = (peak, prominence) }
            index = plateauEnd + 1
        }
        return best.map { (range.lowerBound + $0.index, $0.prominence) }
    }

    /// How far the peak stands above the higher of the lowest points on either side before a higher sample.
    private static func prominenceOf(_ data: [Double], peak: Int, height: Double) -> Double {
        var leftMinimum = height
        var cursor = peak - 1
        while cursor >= 0, data[cursor] <= height {
            leftMinimum = min(leftMinimum, data[cursor])
            cursor -= 1
        }
        var rightMinimum = height
        cursor = peak + 1
        while cursor < data.count, data[cursor] <= height {
            rightMinimum = min(rightMinimum, data[cursor])
            cursor += 1
        }
        return height - max(leftMinimum, rightMinimum)
    }
}
