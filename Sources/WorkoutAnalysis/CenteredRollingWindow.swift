/// Statistics over a centred moving window, as pandas computes `rolling(width, center=True, min_periods=1)`: at
/// position `i` the window holds the values from `i - width / 2` to `i + width / 2`, cut at the ends of the series
/// (so the first and last windows hold fewer values).
///
/// The window is kept sorted as it slides: each step inserts one value and removes one (binary search, then a
/// move of at most `width` values), so a series of n values costs O(n · width) rather than a sort per position.
struct CenteredRollingWindow {
    let width: Int

    /// `width` must be odd, as the detector's windows are; an even one would not be centred the way pandas centres.
    init(width: Int) {
        precondition(width > 0 && width % 2 == 1, "a centred window has an odd width")
        self.width = width
    }

    /// Calls `body` with each position's window in ascending order.
    private func slide(_ values: [Double], _ body: (Int, ArraySlice<Double>) -> Void) {
        let half = width / 2
        var sorted: [Double] = []
        sorted.reserveCapacity(width)
        for index in 0..<min(values.count, half) { Self.insert(values[index], into: &sorted) }
        for index in values.indices {
            if index + half < values.count { Self.insert(values[index + half], into: &sorted) }
            if index - half - 1 >= 0 { Self.remove(values[index - half - 1], from: &sorted) }
            body(index, sorted[...])
        }
    }

    /// The lower and upper quartiles of each window, each interpolated linearly between the two values around
    /// `p · (count − 1)` (pandas' and numpy's default), in one slide.
    func quartiles(_ values: [Double]) -> (lower: [Double], upper: [Double]) {
        var lower = [Double](repeating: 0, count: values.count)
        var upper = [Double](repeating: 0, count: values.count)
        slide(values) { index, window in
            lower[index] = Self.quantile(window, 0.25)
            upper[index] = Self.quantile(window, 0.75)
        }
        return (lower, upper)
    }

    /// The median of each window: the middle value, or the mean of the two middle ones in a window of even count
    /// (at the ends of the series).
    func medians(_ values: [Double]) -> [Double] {
        var result = [Double](repeating: 0, count: values.count)
        slide(values) { index, window in
            let middle = window.startIndex + window.count / 2
            result[index] = window.count % 2 == 1 ? window[middle] : (window[middle - 1] + window[middle]) / 2
        }
        return result
    }

    /// pandas' linear quantile of a sorted window, term for term so that the rounding is the same.
    private static func quantile(_ sorted: ArraySlice<Double>, _ p: Double) -> Double {
        let position = p * Double(sorted.count - 1)
        let low = Int(position)
        let base = sorted.startIndex
        if Double(low) == position { return sorted[base + low] }
        let below = sorted[base + low]
        let above = sorted[base + low + 1]
        return below + (above - below) * (position - Double(low))
    }

    /// The first index whose value is not less than `value`.
    private static func lowerBound(_ value: Double, in sorted: [Double]) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private static func insert(_ value: Double, into sorted: inout [Double]) {
        sorted.insert(value, at: lowerBound(value, in: sorted))
    }

    /// Removes one copy of `value`, which the window holds (the values are finite, so it is found by equality).
    private static func remove(_ value: Double, from sorted: inout [Double]) {
        sorted.remove(at: lowerBound(value, in: sorted))
    }
}
