import HeartRateProfile

#if canImport(Glibc)
import Glibc
#endif

/// What one simulated sensor sends, as a pure function of time and its seed: beats with realistic variability,
/// the notifications that carry them, energy expended, contact, and the scenario's faults. No I/O and no clock:
/// the caller asks for the notification due at a time, so tests can replay it exactly.
struct SensorBehaviour: Sendable {
    let model: SensorModel
    let profile: Scenario.ProfileSpec
    let sendsRR: Bool
    let sendsEnergy: Bool
    let sendsContact: Bool
    private(set) var faults: [Scenario.FaultSpec]
    private var random: SeededRandom
    /// Time of the next beat, seconds since start.
    private var nextBeat: Double
    /// RR intervals (1/1024 s ticks) of beats not yet sent.
    private var pendingRR: [UInt16] = []
    /// Beats the heart made that no notification has reported yet: when, and the time to the next beat.
    private var unreported: [(time: Double, interval: Double)] = []
    /// The heart's beats (the ECG's R-peaks), seconds since start, from about ten seconds back to the newest.
    private(set) var rPeaks: [Double] = []
    private var energy: Double
    private var lastTime: Double = 0
    /// The most recent intervals, for the averaged heart rate a strap reports.
    private var recentIntervals: [Double] = []
    private(set) var notificationCount = 0
    /// The ATT MTU of the link, which bounds a payload to `attMTU - 3` bytes.
    let attMTU: Int
    /// Notifications sent so far in each energy-jump window, by the fault's place in ``faults``.
    private var jumpCounts: [Int: Int] = [:]
    /// The ectopic and missed-beat faults' state.
    private var beatFaults = BeatFaults()

    init(spec: Scenario.SensorSpec, seed: UInt64) {
        model = spec.model
        profile = spec.profile
        sendsRR = spec.rr ?? spec.model.sendsRR
        sendsEnergy = spec.energy ?? spec.model.sendsEnergy
        sendsContact = spec.contact ?? spec.model.detectsContact
        faults = spec.faults
        attMTU = spec.effectiveMTU
        random = SeededRandom(seed: seed)
        energy = Double(spec.energyStart)
        // The first beat falls somewhere in the first second, so sensors started together are not in phase.
        nextBeat = Double.random(in: 0..<0.8, using: &random)
    }

    /// The heart rate the profile asks for at `time`.
    func targetBPM(at time: Double) -> Double {
        switch profile.kind {
        case .steady:
            return profile.bpm
        case .ramp:
            let progress = profile.duration > 0 ? min(1, max(0, time / profile.duration)) : 1
            return profile.from + (profile.to - profile.from) * progress
        case .intervals:
            let cycle = profile.work + profile.rest
            guard cycle > 0 else { return profile.high }
            return time.truncatingRemainder(dividingBy: cycle) < profile.work ? profile.high : profile.low
        }
    }

    private func active(_ kind: Scenario.FaultSpec.Kind, at time: Double) -> Bool {
        faults.contains { $0.kind == kind && $0.covers(time) }
    }

    /// The first fault of `kind` whose window holds `time`.
    private func fault(_ kind: Scenario.FaultSpec.Kind, at time: Double) -> Scenario.FaultSpec? {
        faults.first { $0.kind == kind && $0.covers(time) }
    }

    /// When the notification after the one at `time` is due: on the sensor's own schedule (the n-th at
    /// `(n + phase) / rate` seconds, n ≥ 1) outside storms, and on a storm's own grid (`at + k / rate`) inside one.
    /// Both grids are fixed, so a late wake-up does not shift later notifications.
    func nextNotificationTime(after time: Double, rate: Double, phase: Double) -> Double {
        let storms = faults.filter { $0.kind == .storm && $0.for > 0 }
        var n = max(1, (time * rate - phase).rounded(.down) + 1)
        var own = (n + phase) / rate
        while own <= time {
            n += 1
            own = (n + phase) / rate
        }
        // The sensor's own notifications give way to a storm: skip those its windows hold.
        while let storm = storms.first(where: { $0.covers(own) }) {
            n = max(n + 1, ((storm.at + storm.for) * rate - phase).rounded(.up))
            own = (n + phase) / rate
        }
        var next = own
        for storm in storms where storm.at + storm.for > time {
            let rate = storm.effectiveRate
            var k = max(0, ((time - storm.at) * rate).rounded(.down) + 1)
            var due = storm.at + k / rate
            while due <= time {
                k += 1
                due = storm.at + k / rate
            }
            if storm.covers(due) { next = min(next, due) }
        }
        return next
    }

    /// Whether the sensor is out of radio range at `time` (a disconnect fault).
    func isOutOfRange(at time: Double) -> Bool { active(.disconnect, at: time) }

    /// Adds a fault while running (tests and tools trigger faults at a moment of their choosing).
    mutating func add(_ fault: Scenario.FaultSpec) { faults.append(fault) }

    /// Resets energy expended, as a write of 0x01 to the Heart Rate Control Point does.
    mutating func resetEnergyExpended() { energy = 0 }

    /// One notification to send at `time`.
    struct Notification: Sendable {
        /// The payload; for a malformed notification, the cut bytes.
        var payload: [UInt8]
        var malformed: Bool
        /// Lost in the air: generated (beats consumed) but never delivered.
        var dropped: Bool
    }

    /// Makes the heart beat up to `time`: its beats are drawn in order whoever asks first (the ECG looks ahead of
    /// the Heart Rate notifications), so the same seed gives the same beats either way.
    mutating func advanceHeart(through time: Double) {
        while nextBeat <= time {
            let beatBPM = targetBPM(at: nextBeat)
            // Respiratory sinus arrhythmia (a slow wave) plus beat-to-beat noise, about 3–5 % of the interval.
            let base = 60 / beatBPM
            let wave = 1 + 0.03 * sin(2 * .pi * nextBeat / 4.5)
            let interval = max(0.25, base * wave + random.gaussian(deviation: 0.012 * base))
            unreported.append((nextBeat, interval))
            rPeaks.append(nextBeat)
            nextBeat += interval
        }
        // The ECG needs the beats around the samples it is drawing, a few seconds at most.
        if let stale = rPeaks.firstIndex(where: { $0 >= time - 10 }), stale > 0 { rPeaks.removeFirst(stale) }
    }

    /// Advances to `time` and builds the notification due then.
    mutating func notification(at time: Double) -> Notification {
        let contactLost = active(.contactLoss, at: time)
        var bpm = targetBPM(at: time)
        advanceHeart(through: time)
        let due = unreported.prefix { $0.time <= time }
        unreported.removeFirst(due.count)
        for (beat, interval) in due {
            let reported = beatFaults.report(interval, at: beat, faults: faults)
            if contactLost {
                beatFaults.forgetUnseen()
            } else if let reported {
                pendingRR.append(UInt16(min(65535, (reported * 1024).rounded())))
            }
            recentIntervals = (recentIntervals + [interval]).suffix(4)
        }
        // Straps report a heart rate averaged over the last few beats.
        if !recentIntervals.isEmpty { bpm = 60 * Double(recentIntervals.count) / recentIntervals.reduce(0, +) }
        // About 0.2 kJ/s at rest to 0.8 kJ/s at 150 bpm (roughly 170 to 690 kcal an hour).
        energy = min(65535, energy + max(0.1, (bpm - 50) * 0.008) * max(0, time - lastTime))
        lastTime = time
        notificationCount += 1

        var energyField: UInt16? = sendsEnergy && notificationCount % 10 == 1 ? UInt16(energy) : nil
        if let place = faults.indices.first(where: { faults[$0].kind == .energyJump && faults[$0].covers(time) }) {
            // Each cycle opens with 0 kJ, which reads as a reset, then jumps: a client adding up the increases
            // gains `value` kJ a cycle.
            let count = jumpCounts[place, default: 0]
            jumpCounts[place] = count + 1
            energyField = count % faults[place].effectiveEvery == 0 ? 0 : faults[place].value
        }
        var heartRate = contactLost ? 0 : UInt16(min(255, max(0, bpm.rounded())))
        if let impossible = fault(.impossibleHeartRate, at: time) { heartRate = impossible.bpm }
        let format: HeartRateMeasurement.ValueFormat = heartRate > 255 ? .uint16 : .uint8
        let capacity = HeartRateMeasurement.maximumRRIntervalCount(
            format: format,
            includesEnergyExpended: energyField != nil,
            attMTU: attMTU
        )
        var rr: [RRInterval] = []
        if let storm = fault(.storm, at: time) {
            // Every interval one whole beat at the profile's rate, each plausible on its own; together far more
            // beats than the time since the last notification holds.
            let beat = RRInterval(ticks: UInt16(min(65535, (60 / targetBPM(at: time) * 1024).rounded())))
            rr = Array(repeating: beat, count: min(storm.rr, capacity))
        } else if sendsRR, !contactLost {
            // A sensor sends the most recent beats that fit and drops older ones, as straps do after a stall.
            rr = pendingRR.suffix(capacity).map { RRInterval(ticks: $0) }
        }
        pendingRR.removeAll()
        let contact: SensorContact = sendsContact ? (contactLost ? .notDetected : .detected) : .notSupported
        let measurement = HeartRateMeasurement(
            heartRate: heartRate,
            format: format,
            sensorContact: contact,
            energyExpended: energyField,
            rrIntervals: rr
        )
        var payload = measurement.encoded()
        let malformed = faults.contains {
            $0.kind == .malformed && time >= $0.at && $0.every > 0 && notificationCount % $0.every == 0
        }
        if malformed {
            // Announce a 16-bit heart rate but send only one byte of it.
            payload = [payload[0] | 0x01, payload[1]]
        }
        return Notification(payload: payload, malformed: malformed, dropped: active(.drop, at: time))
    }
}
