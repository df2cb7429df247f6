/// A workout's elapsed time as `HH:MM:SS`, as the live log, the systemd status and the CLI show it; `--:--:--` for
/// a value that is not a time (infinite, NaN, or more than about 30 years), so no caller traps on what it read.
public func formatElapsed(_ seconds: Double) -> String {
    guard seconds.isFinite, abs(seconds) < 1e9 else { return "--:--:--" }
    let total = Int(max(0, seconds))
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(two(total / 3600)):\(two(total / 60 % 60)):\(two(total % 60))"
}
