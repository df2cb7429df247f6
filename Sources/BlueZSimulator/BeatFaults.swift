/// Plays the ectopic and missed-beat faults on the intervals a sensor reports: a premature beat and its
/// compensatory pause, and beats the strap did not see (nothing sent for them; the next interval it sends takes
/// them in). The heart keeps its rhythm through both: a premature ventricular beat leaves the sinus node's timing
/// alone, so the pause makes up exactly what the beat took early, and a missed beat is the strap's failing, not the
/// heart's. Counting beats rather than drawing random numbers keeps a scenario's other random choices, and so
/// everything outside the faults, what it is without them.
struct BeatFaults: Sendable {
    /// Beats counted so far in each beat fault's window, by the fault's place in the sensor's faults.
    private var counts: [Int: Int] = [:]
    /// Seconds a premature beat came early, which the next interval makes up.
    private var compensation = 0.0
    /// Seconds of beats the strap missed, which the next interval it reports takes in.
    private var unseen = 0.0

    /// The interval the strap reports for the beat the heart takes `interval` seconds for from `time`, or nil
    /// when it misses the beat.
    mutating func report(_ interval: Double, at time: Double, faults: [Scenario.FaultSpec]) -> Double? {
        var ectopic = false
        var missed = false
        for (place, fault) in faults.enumerated()
        where Scenario.FaultSpec.beatKinds.contains(fault.kind) && fault.holdsBeat(at: time) {
            let count = counts[place, default: 0] + 1
            counts[place] = count
            guard count % fault.every == 0 else { continue }
            if fault.kind == .ectopic { ectopic = true } else { missed = true }
        }
        var reported = interval + compensation
        compensation = 0
        if ectopic {
            compensation = interval * Scenario.FaultSpec.ectopicPrematurity
            reported -= compensation
        }
        if missed {
            unseen += reported
            return nil
        }
        defer { unseen = 0 }
        return reported + unseen
    }

    /// Forgets a missed beat's interval when the strap reports no beats (contact lost): the next interval it
    /// reports begins at a beat it saw.
    mutating func forgetUnseen() { unseen = 0 }
}
