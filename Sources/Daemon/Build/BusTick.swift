/// How long systoled lets bus input gather before reading it all in one wakeup. Each wakeup costs a commit, a
/// live-log write and a few task hops whatever it carries, so a longer tick costs less CPU per notification but
/// delays the live log by up to the tick (docs/performance.md). A lone notification after a quiet spell is read
/// at once.
let busTick: Duration = .milliseconds(75)

/// The bus tick `SYSTOLE_BUS_TICK_MS` asks for, within 0–1 000 ms (a longer one would leave the daemon deaf to
/// its own callers for as long); the default when it is absent or not a whole number.
func busTick(fromEnvironment milliseconds: String?) -> Duration {
    guard let milliseconds, let value = Int(milliseconds) else { return busTick }
    return .milliseconds(min(max(value, 0), 1_000))
}
