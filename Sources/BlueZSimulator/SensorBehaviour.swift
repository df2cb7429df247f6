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
    private var energy: Double
    private var lastTime: Double = 0
    /// The most recent intervals, for the averaged heart rate a strap reports.
    private var recentIntervals: [Double] = []
    private(set) var notificationCount = 0

    init(spec: Scenario.SensorSpec, seed: UInt64) {
        model = spec.model
        profile = spec.profile
        sendsRR = spec.rr ?? spec.model.sendsRR
        sendsEnergy = spec.energy ?? spec.model.sendsEnergy
        sendsContact = spec.contact ?? spec.model.detectsContact
        faults = spec.faults
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
        faults.contains { $0.kind == kind && time >= $0.at && time < $0.at + $0.for }
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

    /// Advances to `time` and builds the notification due then.
    mutating func notification(at time: Double) -> Notification {
        let contactLost = active(.contactLoss, at: time)
        var bpm = targetBPM(at: time)
        while nextBeat <= time {
            let beatBPM = targetBPM(at: nextBeat)
            // Respiratory sinus arrhythmia (a slow wave) plus beat-to-beat noise, about 3–5 % of the interval.
            let base = 60 / beatBPM
            let wave = 1 + 0.03 * sin(2 * .pi * nextBeat / 4.5)
            let interval = max(0.25, base * wave + random.gaussian(deviation: 0.012 * base))
            if !contactLost { pendingRR.append(UInt16(min(65535, (interval * 1024).rounded()))) }
            nextBeat += interval
            recentIntervals = (recentIntervals + [interval]).suffix(4)
        }
        // Straps report a heart rate averaged over the last few beats.
        if !recentIntervals.isEmpty { bpm = 60 * Double(recentIntervals.count) / recentIntervals.reduce(0, +) }
        // About 0.2 kJ/s at rest to 0.8 kJ/s at 150 bpm (roughly 170 to 690 kcal an hour).
        energy = min(65535, energy + max(0.1, (bpm - 50) * 0.008) * max(0, time - lastTime))
        lastTime = time
        notificationCount += 1

        let withEnergy = sendsEnergy && notificationCount % 10 == 1
        var rr: [RRInterval] = []
        if sendsRR, !contactLost {
            let capacity = HeartRateMeasurement.maximumRRIntervalCount(
                format: .uint8,
                includesEnergyExpended: withEnergy
            )
            // A sensor sends the most recent beats that fit and drops older ones, as straps do after a stall.
            rr = pendingRR.suffix(capacity).map { RRInterval(ticks: $0) }
        }
        pendingRR.removeAll()
        let contact: SensorContact = sendsContact ? (contactLost ? .notDetected : .detected) : .notSupported
        let measurement = HeartRateMeasurement(
            heartRate: contactLost ? 0 : UInt16(min(255, max(0, bpm.rounded()))),
            sensorContact: contact,
            energyExpended: withEnergy ? UInt16(energy) : nil,
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
