/// Places the samples of PMD frames (ECG, acceleration) on the host's clock, from the sensor's own timestamps.
///
/// A frame carries the sensor-clock time of its last sample only. The spacing of its samples is the time since the
/// previous frame over their count (so a strap whose crystal runs at 129.3 Hz is recorded at 129.3 Hz, not at the
/// 130 it was asked for); the first frame of a stream uses the spacing measured before, or the nominal rate.
///
/// The sensor clock is mapped to the host's by an offset: the least (receipt − sensor time) of the frames of the
/// last ``offsetWindow``. A frame is never received before its last sample was taken, so the least delay is the
/// closest estimate of the offset; taking it over a sliding window follows the clocks' drift (crystals differ by
/// tens of ppm). Samples placed never go back in time within a segment.
///
/// The timeline breaks (a new segment, so no sample is smeared over a hole) when: frames were lost (the time since
/// the previous frame holds ``gapFactor`` times more than its samples need); the sensor clock jumped back (Polar's
/// clock restarts at 2019-01-01 when the strap is switched off and on; SDK issue 387 reports backward steps) or
/// forward by more than the host's time since the previous frame (it was set). A frame repeating the previous
/// timestamp is a duplicate and is dropped; a frame with more samples than its time holds at any plausible rate is
/// refused.
public struct PMDTimeline: Sendable {
    /// Why a new segment began.
    public enum Break: Sendable, Equatable {
        /// The stream's first frame, or the first after ``reset()``.
        case start
        /// Frames were lost: this much sensor time passed without samples.
        case gap(Duration)
        /// The sensor's clock went back (restarted, or a glitch).
        case clockBack
        /// The sensor's clock went forward by more than the time that passed on the host.
        case clockForward
    }

    /// Why a frame was not placed.
    public enum Refusal: Error, Sendable, Equatable {
        /// The same timestamp as the previous frame: a repeated frame.
        case duplicate
        /// More samples than the time since the previous frame holds at the highest plausible rate.
        case tooManySamples(rate: Double)
    }

    /// Where one frame's samples go.
    public struct Placement: Sendable, Equatable {
        /// Host time of the frame's first sample.
        public var firstSample: ContinuousClock.Instant
        /// Time between samples on the host's clock (the sensor's spacing corrected by the drift, once known).
        public var interval: Duration
        /// The number of samples.
        public var count: Int
        /// Set when these samples begin a new segment rather than continue the previous frame's.
        public var segmentBreak: Break?
    }

    /// The rate the sensor was asked for, used until one is measured.
    public let nominalRate: Double
    /// Rates a real sensor of this measurement can run at; a frame implying more is refused.
    public let plausibleRates: ClosedRange<Double>
    /// How much longer than its samples need the time since the previous frame may be before it counts as a gap.
    public static let gapFactor = 1.5
    /// How long the least delay is remembered: long enough to see a fast delivery among slow ones, short enough
    /// that drift (20 ppm is 0.6 ms in 30 s) moves the offset smoothly.
    public static let offsetWindow = 30.0
    /// How far the sensor clock may run ahead of the host's between two frames before it counts as set forward.
    public static let forwardTolerance = 2.0

    private var origin: ContinuousClock.Instant?
    /// The previous frame: sensor time (ns) of its last sample, host time (s since `origin`) of it, and of receipt.
    private var previous: (sensor: UInt64, host: Double, received: Double)?
    /// Receipt − sensor time of recent frames, with their receipt (seconds), oldest first.
    private var delays: [(received: Double, offset: Double)] = []
    /// Spacing (ns) measured over the current segment: its sensor time since its first frame, over the samples since.
    private var segmentStart: (sensor: UInt64, samples: Int)?
    /// The spacing last measured (ns), kept across segments.
    public private(set) var measuredInterval: Double?
    /// The offset once a full window had been seen, and when: the drift is how far it moved since.
    private var offsetAnchor: (received: Double, offset: Double)?
    /// The host's clock against the sensor's, in parts per million (positive: the sensor's runs slow), once a
    /// minute of offsets has been seen since the clocks were last anchored.
    public private(set) var driftPPM: Double?

    /// A timeline for a stream asked to run at `nominalRate` samples a second.
    public init(nominalRate: Double, plausibleRates: ClosedRange<Double>) {
        self.nominalRate = nominalRate
        self.plausibleRates = plausibleRates
    }

    /// The rate measured from the sensor's timestamps (samples per second of the sensor's clock), once two frames of
    /// a segment have arrived.
    public var measuredRate: Double? { measuredInterval.map { 1e9 / $0 } }

    /// Forgets the previous frame and the offset (a reconnect: the sensor's clock may have restarted). The measured
    /// rate is kept.
    public mutating func reset() {
        previous = nil
        delays = []
        segmentStart = nil
        offsetAnchor = nil
    }

    /// Places a frame of `count` samples whose last was taken at `sensorTimestamp` (ns, sensor clock), received at
    /// `receivedAt`.
    public mutating func place(
        sensorTimestamp: UInt64,
        count: Int,
        receivedAt: ContinuousClock.Instant
    ) -> Result<Placement, Refusal> {
        let origin = self.origin ?? receivedAt
        self.origin = origin
        let received = Self.seconds(receivedAt - origin)
        let nominal = measuredInterval ?? 1e9 / nominalRate
        var spacing = nominal
        var segmentBreak: Break? = .start
        if let previous {
            guard sensorTimestamp != previous.sensor else { return .failure(.duplicate) }
            if sensorTimestamp < previous.sensor {
                segmentBreak = .clockBack
            } else {
                let elapsed = Double(sensorTimestamp - previous.sensor)
                let hostElapsed = (received - previous.received) * 1e9
                let perSample = elapsed / Double(max(count, 1))
                if elapsed > hostElapsed + Self.forwardTolerance * 1e9 {
                    segmentBreak = .clockForward
                } else if 1e9 / perSample > plausibleRates.upperBound * 1.05 {
                    return .failure(.tooManySamples(rate: 1e9 / perSample))
                } else if perSample > nominal * Self.gapFactor {
                    let missing = elapsed - Double(count) * nominal
                    segmentBreak = .gap(.nanoseconds(Int64(missing)))
                } else {
                    segmentBreak = nil
                    spacing = perSample
                }
            }
        }
        if segmentBreak == .clockBack || segmentBreak == .clockForward {
            delays = []
            offsetAnchor = nil
        }
        learnOffset(sensorTimestamp: sensorTimestamp, received: received)
        let offset = delays.map(\.offset).min() ?? 0
        trackDrift(offset: offset, received: received)

        let lastSensorSeconds = Double(sensorTimestamp) / 1e9
        var first = lastSensorSeconds - Double(count - 1) * spacing / 1e9 + offset
        if segmentBreak == nil, let previous {
            // The offset may have dropped (a faster delivery seen): never place a sample before the previous one.
            first = max(first, previous.host + spacing / 1e9 * 0.5)
        }
        let last = first + Double(count - 1) * spacing / 1e9
        measureRate(sensorTimestamp: sensorTimestamp, count: count, continuing: segmentBreak == nil)
        previous = (sensorTimestamp, last, received)
        return .success(
            Placement(
                firstSample: origin + .nanoseconds(Int64((first * 1e9).rounded())),
                interval: .nanoseconds(Int64((spacing * (1 + (driftPPM ?? 0) / 1e6)).rounded())),
                count: count,
                segmentBreak: segmentBreak
            )
        )
    }

    private mutating func learnOffset(sensorTimestamp: UInt64, received: Double) {
        delays.append((received, received - Double(sensorTimestamp) / 1e9))
        let horizon = received - Self.offsetWindow
        if let stale = delays.firstIndex(where: { $0.received >= horizon }), stale > 0 {
            delays.removeFirst(stale)
        }
    }

    private mutating func trackDrift(offset: Double, received: Double) {
        guard let first = delays.first, received - first.received >= Self.offsetWindow * 0.9 else { return }
        guard let anchor = offsetAnchor else {
            offsetAnchor = (received, offset)
            return
        }
        if received - anchor.received >= 60 { driftPPM = (offset - anchor.offset) / (received - anchor.received) * 1e6 }
    }

    private mutating func measureRate(sensorTimestamp: UInt64, count: Int, continuing: Bool) {
        guard continuing, let start = segmentStart else {
            segmentStart = (sensorTimestamp, 0)
            return
        }
        let samples = start.samples + count
        segmentStart = (start.sensor, samples)
        let interval = Double(sensorTimestamp - start.sensor) / Double(samples)
        if plausibleRates.contains(1e9 / interval) { measuredInterval = interval }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
