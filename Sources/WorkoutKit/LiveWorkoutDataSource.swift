import Foundation

/// One reading from a heart-rate sensor, as the Bluetooth layer delivers it.
public struct SensorMeasurement: Hashable, Sendable {
    /// One beat, back-dated by the sensor layer.
    public struct Beat: Hashable, Sendable {
        public var date: Date
        /// The RR interval ending at this beat, raw 1/1024 s ticks.
        public var rrTicks: UInt16
        /// Beats before this one were lost.
        public var precededByGap: Bool

        public init(date: Date, rrTicks: UInt16, precededByGap: Bool = false) {
            self.date = date
            self.rrTicks = rrTicks
            self.precededByGap = precededByGap
        }
    }

    /// Energy expended over an interval ending at the measurement, as the sensor layer checked it.
    public struct ActiveEnergy: Hashable, Sendable {
        public var kilojoules: Double
        /// When the interval began (the sensor's previous energy report).
        public var since: Date

        public init(kilojoules: Double, since: Date) {
            self.kilojoules = kilojoules
            self.since = since
        }
    }

    public var date: Date
    /// Beats per minute, nil when the sensor had no reading (e.g. no skin contact).
    public var heartRate: Double?
    public var beats: [Beat]
    /// The energy expended since the sensor's previous report, when this notification carried one. The sensor
    /// layer turns its cumulative counter into these increments, bounded by what a person can expend.
    public var activeEnergy: ActiveEnergy?
    /// A piece of ECG or acceleration the sensor streamed (its device is set by the data source).
    public var waveform: WaveformSample?

    public init(
        date: Date,
        heartRate: Double?,
        beats: [Beat] = [],
        activeEnergy: ActiveEnergy? = nil,
        waveform: WaveformSample? = nil
    ) {
        self.date = date
        self.heartRate = heartRate
        self.beats = beats
        self.activeEnergy = activeEnergy
        self.waveform = waveform
    }
}

/// Decides whether a sample is collected.
public typealias SamplePredicate = @Sendable (Sample) -> Bool

/// Why a data source refused a call.
public enum LiveWorkoutDataSourceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The type is not among those the configuration enables: only ask for what you need.
    case typeNotEnabled(SampleType, enabled: [String])
    /// A user sample of a type the data source does not collect.
    case notCollected(SampleType)

    public var description: String {
        switch self {
        case .typeNotEnabled(let type, let enabled):
            "\(type) is not enabled in the configuration (enabled: \(enabled.joined(separator: ", "))); "
                + "add it to the enabled sample types first"
        case .notCollected(let type):
            "\(type) is not being collected: enable collection for it first"
        }
    }
}

/// Turns sensor readings and user entries into samples for a ``LiveWorkoutBuilder`` (HealthKit's
/// HKLiveWorkoutDataSource): collects ``typesToCollect`` (defaulting by activity), filtered by predicates, and
/// says which of them the connected sensors actually generate.
public actor LiveWorkoutDataSource {
    public nonisolated let configuration: WorkoutConfiguration
    /// The types the configuration allows; asking for any other is an error.
    public nonisolated let enabledTypes: Set<SampleType>
    public private(set) var typesToCollect: Set<SampleType>
    private var predicates: [SampleType: SamplePredicate] = [:]
    private var builder: LiveWorkoutBuilder?
    /// Types the sensors have produced data for since collection began.
    public private(set) var generatedTypes: Set<SampleType> = []
    /// Why the builder last refused sensor samples (a full disk, say), if it did.
    public private(set) var lastDeliveryError: (any Error)?
    /// Samples the store refused (a full disk, say): kept, oldest first, and saved with the next delivery that
    /// succeeds, so a store that recovers loses nothing. At most ``pendingLimit``; beyond that the oldest go.
    public private(set) var pending: [Sample] = []
    /// How many refused samples are kept for a retry (about seven hours of one sensor at 4 Hz).
    public static let pendingLimit = 100_000

    /// The types a workout of `activity` collects unless told otherwise: heart rate, heartbeat series, active
    /// energy and the waveforms (which only sensors asked to stream them send). Swimming leaves out the heartbeat
    /// series and the ECG (beat-to-beat timing is unreliable in water).
    public static func defaultTypes(for activity: WorkoutActivityType) -> Set<SampleType> {
        activity == .swimming
            ? [.heartRate, .activeEnergyBurned]
            : [.heartRate, .heartbeatSeries, .activeEnergyBurned, .electrocardiogram, .acceleration]
    }

    public init(
        configuration: WorkoutConfiguration,
        enabledTypes: Set<SampleType> = [.heartRate, .heartbeatSeries, .activeEnergyBurned, .dietaryWater]
    ) {
        self.configuration = configuration
        self.enabledTypes = enabledTypes
        typesToCollect = Self.defaultTypes(for: configuration.activityType).intersection(enabledTypes)
    }

    /// Collects `type`, optionally only samples `predicate` accepts.
    public func enableCollection(
        for type: SampleType,
        predicate: SamplePredicate? = nil
    ) throws(LiveWorkoutDataSourceError) {
        guard enabledTypes.contains(type) else {
            throw .typeNotEnabled(type, enabled: enabledTypes.map(\.identifier).sorted())
        }
        typesToCollect.insert(type)
        predicates[type] = predicate
    }

    /// Stops collecting `type`.
    public func disableCollection(for type: SampleType) {
        typesToCollect.remove(type)
        predicates[type] = nil
    }

    /// Sends collected samples to `builder`.
    public func attach(to builder: LiveWorkoutBuilder) { self.builder = builder }

    /// Converts one reading into samples and hands those being collected to the builder. Returns whether they
    /// were all stored (false when no builder collects yet, or the builder refused them).
    @discardableResult
    public func receive(_ measurement: SensorMeasurement, from device: Device) async -> Bool {
        await deliver(samples(of: measurement, from: device))
    }

    /// Converts readings, from any sensors and in the order they arrived, into samples and hands those being
    /// collected to the builder in one batch (one commit for all of them). Returns whether they were all stored.
    @discardableResult
    public func receive(_ measurements: [(SensorMeasurement, Device)]) async -> Bool {
        var samples: [Sample] = []
        for (measurement, device) in measurements { samples += self.samples(of: measurement, from: device) }
        return await deliver(samples)
    }

    private func samples(of measurement: SensorMeasurement, from device: Device) -> [Sample] {
        var samples: [Sample] = []
        if let bpm = measurement.heartRate {
            generatedTypes.insert(.heartRate)
            samples.append(
                .quantity(
                    QuantitySample(
                        type: .heartRate,
                        quantity: Quantity(bpm, .countPerMinute),
                        start: measurement.date,
                        end: measurement.date,
                        device: device
                    )
                )
            )
        }
        if let first = measurement.beats.first {
            generatedTypes.insert(.heartbeatSeries)
            let beats = measurement.beats.map {
                HeartbeatSeriesSample.Beat(
                    timeSinceStart: $0.date.timeIntervalSince(first.date),
                    rrTicks: $0.rrTicks,
                    precededByGap: $0.precededByGap
                )
            }
            samples.append(
                .heartbeatSeries(
                    HeartbeatSeriesSample(
                        start: first.date,
                        end: measurement.beats.last!.date,
                        beats: beats,
                        device: device
                    )
                )
            )
        }
        if let energy = measurement.activeEnergy {
            generatedTypes.insert(.activeEnergyBurned)
            if energy.kilojoules > 0 {
                samples.append(
                    .quantity(
                        QuantitySample(
                            type: .activeEnergyBurned,
                            quantity: Quantity(energy.kilojoules, .kilojoule),
                            start: energy.since,
                            end: measurement.date,
                            device: device
                        )
                    )
                )
            }
        }
        if var waveform = measurement.waveform, waveform.isValid {
            generatedTypes.insert(.waveform(waveform.kind))
            waveform.device = device
            samples.append(.waveform(waveform))
        }
        return samples
    }

    /// A sample the user adds during the workout (e.g. water drunk).
    public func addUserSample(_ sample: QuantitySample) async throws {
        let type = SampleType.quantity(sample.type)
        guard enabledTypes.contains(type) else {
            throw LiveWorkoutDataSourceError.typeNotEnabled(type, enabled: enabledTypes.map(\.identifier).sorted())
        }
        guard typesToCollect.contains(type) else { throw LiveWorkoutDataSourceError.notCollected(type) }
        try await builder?.add([.quantity(sample)])
    }

    private func deliver(_ samples: [Sample]) async -> Bool {
        let collected = samples.filter { sample in
            typesToCollect.contains(sample.sampleType) && (predicates[sample.sampleType]?(sample) ?? true)
        }
        guard !collected.isEmpty else { return true }
        guard let builder else { return false }
        return await save(collected, with: builder)
    }

    /// Saves the samples the store refused earlier, if any (before the workout ends). Returns whether none are
    /// left.
    @discardableResult
    public func savePending() async -> Bool {
        guard !pending.isEmpty, let builder else { return pending.isEmpty }
        return await save([], with: builder)
    }

    /// Hands the kept samples and `samples` to the builder; what the store refuses is kept for the next try.
    private func save(_ samples: [Sample], with builder: LiveWorkoutBuilder) async -> Bool {
        // Taken out before the await: a delivery running meanwhile must not save the same samples again.
        let batch = pending + samples
        pending = []
        do {
            try await builder.add(batch)
            return true
        } catch {
            lastDeliveryError = error
            // The builder's own refusals (not collecting, ended) will not change: keep only what it did not
            // refuse for its own reasons. The store's refusals (a full disk) may pass.
            let keep = error is LiveWorkoutBuilderError ? batch.dropLast(samples.count) : batch[...]
            pending = Array((keep + pending).suffix(Self.pendingLimit))
            return false
        }
    }
}
