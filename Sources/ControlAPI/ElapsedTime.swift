/// A workout's elapsed time as `HH:MM:SS`, as the live log, the systemd status and the CLI show it.
public func formatElapsed(_ seconds: Double) -> String {
    let total = Int(max(0, seconds.isFinite ? seconds : 0))
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(two(total / 3600)):\(two(total / 60 % 60)):\(two(total % 60))"
}
