import Foundation

/// A signal sampled at a steady rate: a single-lead electrocardiogram in µV (HealthKit's HKElectrocardiogram) or a
/// three-axis acceleration in milli-g, as a Polar H10 streams them. The samples are contiguous: a sample that
/// follows lost ones (a dropout, a clock that jumped) begins a new ``WaveformSample`` with ``precededByGap`` set.
public struct WaveformSample: Hashable, Sendable, Identifiable {
    /// What the signal measures.
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        /// One lead's voltage, in µV.
        case electrocardiogram
        /// Acceleration along x, y and z, in milli-g.
        case acceleration

        /// How many channels a sample of this kind has.
        public var channelCount: Int { self == .electrocardiogram ? 1 : 3 }
        /// The channels' unit, as EDF and CSV write it.
        public var unit: String { self == .electrocardiogram ? "uV" : "mg" }
        /// The largest magnitude a value may have (±100 mV of ECG; ±16 g, the widest range a strap offers).
        public var limit: Int32 { self == .electrocardiogram ? 100_000 : 16_000 }
    }

    public var id: UUID
    public var kind: Kind
    /// The first value's time.
    public var startDate: Date
    /// Values a second, as measured from the sensor's clock (an H10's "130 Hz" ECG runs at 128–131 Hz).
    public var samplingFrequency: Double
    /// One array of values per channel, all of one length, oldest first.
    public var channels: [[Int32]]
    /// Values before the first were lost (or this is the first of its stream): it does not continue the previous
    /// sample of the same sensor.
    public var precededByGap: Bool
    public var device: Device?
    public var metadata: [String: MetadataValue]

    public init(
        id: UUID = .random(),
        kind: Kind,
        start: Date,
        samplingFrequency: Double,
        channels: [[Int32]],
        precededByGap: Bool = false,
        device: Device? = nil,
        metadata: [String: MetadataValue] = [:]
    ) {
        self.id = id
        self.kind = kind
        self.startDate = start
        self.samplingFrequency = samplingFrequency
        self.channels = channels
        self.precededByGap = precededByGap
        self.device = device
        self.metadata = metadata
    }

    /// Values per channel.
    public var count: Int { channels.first?.count ?? 0 }

    /// How far a sample not marked ``precededByGap`` may start from the end of the one before it and still
    /// continue it: lost frames are marked as gaps by the sensor's clock, while the placement of frames on the
    /// host's clock moves by a few milliseconds as the radio's delay is learnt (13 ms seen in an emulated VM).
    public static let placementTolerance: TimeInterval = 0.25

    /// The end of the last value's interval: `count` values at `samplingFrequency` after the start.
    public var endDate: Date {
        samplingFrequency > 0 ? startDate.addingTimeInterval(Double(count) / samplingFrequency) : startDate
    }

    /// Whether the sample is well formed: its kind's number of channels, all of one non-zero length, a rate
    /// between 1 and 1000 Hz, every value within the kind's limit. Stores and importers refuse the rest.
    public var isValid: Bool {
        guard channels.count == kind.channelCount, count > 0, channels.allSatisfy({ $0.count == count }),
            samplingFrequency.isFinite, samplingFrequency >= 1, samplingFrequency <= 1000
        else { return false }
        let limit = kind.limit
        return channels.allSatisfy { $0.allSatisfy { $0 >= -limit && $0 <= limit } }
    }
}
