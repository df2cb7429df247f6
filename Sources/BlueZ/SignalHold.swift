/// Which of bluetoothd's signals the client applies at once and which it holds, around reloads of its cache.
///
/// A reload asks bluetoothd for all its objects and then swaps them in; a change signalled after bluetoothd
/// answered but applied before the swap would be overwritten by the older answer. So signals arriving while any
/// reload is under way are held, and applied in arrival order once none is. Signals arriving while held ones are
/// being applied are held too, so order is kept, and one caller applies them at a time.
///
/// A value type without locks: the client keeps it inside its mutex and applies what it returns outside.
struct SignalHold<Signal> {
    private(set) var reloads = 0
    private(set) var replaying = false
    private(set) var held: [Signal] = []

    mutating func beginReload() { reloads += 1 }

    mutating func endReload() { reloads -= 1 }

    /// Whether `signal` may be applied now; if not, it is held.
    mutating func take(_ signal: Signal) -> Bool {
        guard reloads > 0 || replaying else { return true }
        held.append(signal)
        return false
    }

    /// The next held signals to apply, or nil when there are none to apply now. `isReplayer` is the caller's: false
    /// until it first gets a batch. A caller that is not the replayer gets nil while another one replays.
    mutating func nextBatch(isReplayer: inout Bool) -> [Signal]? {
        if !isReplayer && replaying { return nil }
        guard reloads == 0, !held.isEmpty else {
            if isReplayer { replaying = false }
            return nil
        }
        replaying = true
        isReplayer = true
        defer { held = [] }
        return held
    }
}
