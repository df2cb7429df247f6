import PolarMeasurementData

#if canImport(Glibc)
import Glibc
#endif

/// One running PMD measurement of a simulated strap (ECG or accelerometer): which samples are due when, and the
/// frames that carry them, stamped by the strap's own clock. Pure: the caller says what time it is.
struct PolarStream: Sendable {
    let type: PMDMeasurementType
    /// Host seconds (simulator time) of sample 0.
    let firstSampleAt: Double
    /// Samples a second of the host's clock.
    let rate: Double
    let samplesPerFrame: Int
    let spec: PMDSpec
    /// The strap's clock: nanoseconds since 2000-01-01 at simulator time 0, and its error.
    let clock: PolarClock
    /// Values played instead of the synthesized ECG (`--ecg-file`); the stream ends after the last.
    let recorded: [Int32]?
    let synthesizer: ECGSynthesizer
    private(set) var nextSample = 0
    private(set) var framesSent = 0
    private var previousTimestamp: UInt64?

    init(
        type: PMDMeasurementType,
        startedAt: Double,
        rate: Double,
        mtu: Int,
        spec: PMDSpec,
        clock: PolarClock,
        recorded: [Int32]?,
        seed: UInt64
    ) {
        self.type = type
        self.firstSampleAt = startedAt + (type == .ecg ? spec.startDelay : 0)
        self.rate = rate
        samplesPerFrame =
            type == .ecg ? PMDSpec.ecgSamplesPerFrame(mtu: mtu) : PMDSpec.accSamplesPerFrame(mtu: mtu)
        self.spec = spec
        self.clock = clock
        self.recorded = type == .ecg ? recorded : nil
        synthesizer = ECGSynthesizer(noise: spec.noise, seed: seed)
    }

    /// Host time of the last sample of the next frame: when it is due.
    var nextFrameDue: Double? {
        if let recorded, nextSample >= recorded.count { return nil }
        return firstSampleAt + Double(nextSample + frameLength - 1) / rate
    }

    private var frameLength: Int {
        guard let recorded else { return samplesPerFrame }
        return min(samplesPerFrame, recorded.count - nextSample)
    }

    /// The frames due by `time` (payloads as notified, hostile ones included), given the heart's R-peaks.
    mutating func frames(until time: Double, rPeaks: [Double]) -> [[UInt8]] {
        var payloads: [[UInt8]] = []
        while let due = nextFrameDue, due <= time {
            let count = frameLength
            let indices = nextSample..<(nextSample + count)
            nextSample += count
            framesSent += 1
            var timestamp = clock.sensorTime(atHost: due)
            if spec.backwardEvery > 0, framesSent % spec.backwardEvery == 0 { timestamp -= 1_000_000_000 }
            var frame: PMDFrame
            if type == .ecg {
                let values = indices.map { index in
                    recorded?[index]
                        ?? synthesizer.microvolts(
                            at: firstSampleAt + Double(index) / rate,
                            index: index,
                            rPeaks: rPeaks
                        )
                }
                frame = PMDFrame.ecg(sensorTimestamp: timestamp, microvolts: values)
            } else {
                frame = PMDFrame.acceleration(
                    sensorTimestamp: timestamp,
                    samples: indices.map { acceleration(at: firstSampleAt + Double($0) / rate) }
                )
            }
            if spec.hostileEvery > 0, framesSent % spec.hostileEvery == 0 {
                payloads.append(hostile(frame, kind: framesSent / spec.hostileEvery))
            } else {
                payloads.append(frame.encoded())
                if spec.duplicateEvery > 0, framesSent % spec.duplicateEvery == 0 { payloads.append(frame.encoded()) }
            }
            previousTimestamp = timestamp
        }
        return payloads
    }

    /// A strap on a runner: gravity on z, the stride's bounce and a slow sway, milli-g.
    private func acceleration(at time: Double) -> PMDAcceleration {
        PMDAcceleration(
            x: Int32((30 * sin(2 * .pi * 0.25 * time)).rounded()),
            y: Int32((20 * sin(2 * .pi * 1.5 * time)).rounded()),
            z: Int32((1000 + 150 * sin(2 * .pi * 1.5 * time)).rounded())
        )
    }

    /// Frames no strap sends: cut mid-sample, of a layout nobody reads, longer than an attribute, or with more
    /// samples than the time since the previous frame holds.
    private func hostile(_ frame: PMDFrame, kind: Int) -> [UInt8] {
        let bytes = frame.encoded()
        switch kind % 4 {
        case 0: return Array(bytes.dropLast())
        case 1:
            var odd = frame
            odd.layout = 0x55
            return odd.encoded()
        case 2: return bytes + [UInt8](repeating: 0xA5, count: 600 - bytes.count)
        default:
            var crowded = frame
            crowded.sensorTimestamp = (previousTimestamp ?? frame.sensorTimestamp) &+ 1_000_000
            return crowded.encoded()
        }
    }
}

/// A strap's clock: it starts at 2019-01-01 when the strap is switched on (Polar's default) and runs `ppm` off the
/// host's.
struct PolarClock: Sendable, Equatable {
    /// 2019-01-01T00:00:00Z in nanoseconds since 2000-01-01.
    static let switchedOn: UInt64 = 599_616_000 * 1_000_000_000
    /// Simulator time when the strap was switched on.
    var onAt: Double = 0
    var ppm: Double = 0

    func sensorTime(atHost time: Double) -> UInt64 {
        Self.switchedOn + UInt64(max(0, (time - onAt) * (1 + ppm / 1e6) * 1e9).rounded())
    }
}
