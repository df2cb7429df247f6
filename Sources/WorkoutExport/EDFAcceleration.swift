import Foundation

/// The accelerometer's three axes on an EDF file's record grid (see ``EDFRecording/acceleration``).
struct EDFAcceleration {
    /// Samples of each axis in a record.
    let perRecord: Int
    /// x, y and z, `perRecord` a record, every record.
    var axes: [[Int32]] = [[], [], []]
    /// Where it was not recorded: seconds after the grid's origin, and how long.
    var missing: [(onset: Double, seconds: Double)] = []

    /// The axes at `perRecord` samples per record of `duration` seconds, `records` records from `origin`.
    init?(_ runs: [EDFRecording.AccelerationRun], origin: Date, duration: Double, records: Int) {
        let runs = runs.filter { !$0.x.isEmpty && $0.rate > 0 && $0.x.count == $0.y.count && $0.x.count == $0.z.count }
        guard !runs.isEmpty else { return nil }
        let count = runs.reduce(0) { $0 + $1.x.count }
        let rate = runs.reduce(0.0) { $0 + $1.rate * Double($1.x.count) } / Double(count)
        perRecord = max(1, Int((rate * duration).rounded()))
        let step = duration / Double(perRecord)
        let total = perRecord * records
        for index in 0..<3 { axes[index].reserveCapacity(total) }
        var run = 0
        var missingSince: Int?
        for point in 0..<total {
            let time = Double(point) * step
            // The run holding this time, if any (the grid and the runs both go forward).
            while run < runs.count, Self.end(of: runs[run], from: origin) < time { run += 1 }
            let values = run < runs.count ? Self.values(in: runs[run], at: time, from: origin) : nil
            if let values {
                if let since = missingSince {
                    missing.append((Double(since) * step, Double(point - since) * step))
                    missingSince = nil
                }
                for index in 0..<3 { axes[index].append(values[index]) }
            } else {
                if missingSince == nil { missingSince = point }
                for index in 0..<3 { axes[index].append(0) }
            }
        }
        if let since = missingSince { missing.append((Double(since) * step, Double(total - since) * step)) }
    }

    /// Seconds after `origin` of the run's last sample.
    private static func end(of run: EDFRecording.AccelerationRun, from origin: Date) -> Double {
        run.start.timeIntervalSince(origin) + Double(run.x.count - 1) / run.rate
    }

    /// The axes at `time` (seconds after `origin`), interpolated between the samples either side; nil outside the
    /// run.
    private static func values(in run: EDFRecording.AccelerationRun, at time: Double, from origin: Date) -> [Int32]? {
        let position = (time - run.start.timeIntervalSince(origin)) * run.rate
        // Within a thousandth of a sample of the run's ends still counts as in it (the grid's rounding).
        guard position >= -1e-3, position <= Double(run.x.count - 1) + 1e-3 else { return nil }
        let clamped = min(max(position, 0), Double(run.x.count - 1))
        let below = Int(clamped.rounded(.down))
        let above = min(below + 1, run.x.count - 1)
        let fraction = clamped - Double(below)
        return [run.x, run.y, run.z].map { axis -> Int32 in
            let low = Double(axis[below])
            let high = Double(axis[above])
            return Int32((low + (high - low) * fraction).rounded())
        }
    }
}
