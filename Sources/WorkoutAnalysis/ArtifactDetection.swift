/// Finds the artifacts of one gap-free series of beats, by Lipponen & Tarvainen's classification (2019, "A robust
/// algorithm for heart rate variability time series artefact correction using novel beat classification", J Med Eng
/// Technol 43(3)), in the form NeuroKit2 0.2.13 gives it (`_find_artifacts`), whose results systole's are checked
/// against: the same constants, the same first values, the same windows and the same order of decisions.
///
/// Positions are those of the beats in `peaks`: artifact `i` is the beat at `peaks[i]`, whose interval runs from
/// `peaks[i - 1]`.
struct ArtifactDetection {
    /// The artifacts found, each list ascending.
    struct Artifacts: Equatable {
        /// A beat out of place between normal ones: a short interval and a long one that make up for each other.
        var ectopic: [Int] = []
        /// A beat the sensor did not see: an interval of about two.
        var missed: [Int] = []
        /// A beat that was not one: two intervals that together make about one.
        var extra: [Int] = []
        /// An interval too long or too short that is none of the above.
        var longShort: [Int] = []

        /// All of them, as NeuroKit counts them to decide whether another pass helps.
        var count: Int { ectopic.count + missed.count + extra.count + longShort.count }
    }

    // The paper's constants, as NeuroKit's defaults.
    static let c1 = 0.13
    static let c2 = 0.17
    static let alpha = 5.2
    /// Beats in the window of the quartiles each threshold is made from.
    static let thresholdWidth = 91
    /// Beats in the window of the median each interval is compared with.
    static let medianWidth = 11

    /// The artifacts among `peaks` (sample positions, ascending) at `samplingRate` samples a second.
    static func find(_ peaks: [Int], samplingRate: Double) -> Artifacts {
        let count = peaks.count
        guard count > 0 else { return Artifacts() }

        // Intervals in seconds, one per peak: the first peak has none, so it gets the mean of the others, which
        // keeps the median and the thresholds from seeing a made-up value.
        var rr = [Double](repeating: 0, count: count)
        var total = 0
        for index in 1..<max(1, count) {
            rr[index] = Double(peaks[index] - peaks[index - 1]) / samplingRate
            total += peaks[index] - peaks[index - 1]
        }
        // numpy sums multiples of 1/rate exactly as the integer total does, so the mean rounds the same way.
        rr[0] = count > 1 ? Double(total) / samplingRate / Double(count - 1) : 1

        // Successive differences of the intervals, the first again the mean of the others.
        var drrs = [Double](repeating: 0, count: count)
        var drrsTotal = 0.0
        for index in 1..<max(1, count) {
            drrs[index] = rr[index] - rr[index - 1]
            drrsTotal += drrs[index]
        }
        drrs[0] = count > 1 ? drrsTotal / Double(count - 1) : 0

        // Each difference in units of its threshold: alpha times the quartile deviation of nearby differences.
        let threshold1 = threshold(drrs)
        for index in drrs.indices {
            drrs[index] = threshold1[index] != 0 ? drrs[index] / threshold1[index] : .nan
        }

        // Subspaces: how each difference relates to the next ones (numpy's "reflect" padding at the ends).
        let padded = { (index: Int) -> Double in drrs[reflected(index, count: count)] }
        var s12 = [Double](repeating: 0, count: count)
        var s22 = [Double](repeating: 0, count: count)
        for index in 0..<count {
            let d = drrs[index]
            if d > 0 {
                s12[index] = nanMax(padded(index - 1), padded(index + 1))
            } else if d < 0 {
                s12[index] = nanMin(padded(index - 1), padded(index + 1))
            }
            if d >= 0 {
                s22[index] = nanMin(padded(index + 1), padded(index + 2))
            } else if d < 0 {
                s22[index] = nanMax(padded(index + 1), padded(index + 2))
            }
        }

        // Each interval's deviation from the median of its neighbourhood, shortfalls counted double.
        let medrr = CenteredRollingWindow(width: medianWidth).medians(rr)
        var mrrs = [Double](repeating: 0, count: count)
        for index in 0..<count {
            let deviation = rr[index] - medrr[index]
            mrrs[index] = deviation < 0 ? deviation * 2 : deviation
        }
        let threshold2 = threshold(mrrs)
        for index in mrrs.indices {
            mrrs[index] = threshold2[index] != 0 ? mrrs[index] / threshold2[index] : .nan
        }

        // The decision tree of the paper's figure 1. A difference that is not a number (a zero threshold) compares
        // false everywhere, as in numpy.
        var artifacts = Artifacts()
        var i = 0
        while i < count - 2 {
            let d = drrs[i]
            if abs(d) <= 1 {
                i += 1
                continue
            }
            let ectopicLong = d > 1 && s12[i] < (-c1 * d - c2)
            let ectopicShort = d < -1 && s12[i] > (-c1 * d + c2)
            if ectopicLong || ectopicShort {
                artifacts.ectopic.append(i)
                i += 1
                continue
            }
            if !(abs(d) > 1 || abs(mrrs[i]) > 3) {
                i += 1
                continue
            }
            // The next beat is looked at too when its difference is the smaller of the next two, and either way
            // the walk moves on one beat per beat looked at.
            var candidates = [i]
            if abs(drrs[i + 1]) < abs(drrs[i + 2]) { candidates.append(i + 1) }
            for j in candidates {
                let long = drrs[j] > 1 && s22[j] < -1
                let farFromMedian = abs(mrrs[j]) > 3
                let short = drrs[j] < -1 && s22[j] > 1
                i += 1
                guard long || farFromMedian || short else { continue }
                let halfIsNormal = abs(rr[j] / 2 - medrr[j]) < threshold2[j]
                let sumIsNormal = abs(rr[j] + rr[j + 1] - medrr[j]) < threshold2[j]
                if short && sumIsNormal {
                    artifacts.extra.append(j)
                } else if long && halfIsNormal {
                    artifacts.missed.append(j)
                } else {
                    artifacts.longShort.append(j)
                }
            }
        }
        return artifacts
    }

    /// Alpha times half the interquartile range of the magnitudes around each position.
    private static func threshold(_ values: [Double]) -> [Double] {
        let (q1, q3) = CenteredRollingWindow(width: thresholdWidth).quartiles(values.map(abs))
        return zip(q1, q3).map { alpha * (($1 - $0) / 2) }
    }

    /// The index numpy's "reflect" padding reads for position `index` of a series of `count` values (mirrored at
    /// the ends without repeating the end value, as often as it takes).
    static func reflected(_ index: Int, count: Int) -> Int {
        guard count > 1 else { return 0 }
        let period = 2 * (count - 1)
        var position = index % period
        if position < 0 { position += period }
        return position < count ? position : period - position
    }

    /// numpy's `max` of two values: not a number when either is not one.
    private static func nanMax(_ a: Double, _ b: Double) -> Double { a.isNaN || b.isNaN ? .nan : max(a, b) }

    /// numpy's `min` of two values: not a number when either is not one.
    private static func nanMin(_ a: Double, _ b: Double) -> Double { a.isNaN || b.isNaN ? .nan : min(a, b) }
}
