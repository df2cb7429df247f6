import Foundation

/// The sensor that produced samples.
public struct Device: Hashable, Sendable, Codable {
    public var name: String?
    /// Bluetooth address, `A0:9E:1A:12:34:56`.
    public var address: String?
    public var manufacturer: String?
    /// Body Sensor Location, e.g. "chest".
    public var bodyLocation: String?
    public var firmwareVersion: String?

    public init(
        name: String? = nil,
        address: String? = nil,
        manufacturer: String? = nil,
        bodyLocation: String? = nil,
        firmwareVersion: String? = nil
    ) {
        self.name = name
        self.address = address
        self.manufacturer = manufacturer
        self.bodyLocation = bodyLocation
        self.firmwareVersion = firmwareVersion
    }
}

/// A metadata value (HealthKit allows strings, numbers, dates and quantities).
public enum MetadataValue: Hashable, Sendable, Codable {
    case string(String)
    case number(Double)
    case date(Date)
    case bool(Bool)
}

/// A quantity over a time interval. `count` > 1 makes it a series sample: many readings (e.g. one heart rate
/// per second) summarised as one sample, with the readings themselves kept as its series.
public struct QuantitySample: Hashable, Sendable, Identifiable {
    public var id: UUID
    public var type: QuantityType
    public var quantity: Quantity
    public var startDate: Date
    public var endDate: Date
    /// How many readings the sample stands for (1 for a single reading).
    public var count: Int
    public var device: Device?
    public var metadata: [String: MetadataValue]

    public init(
        id: UUID = .random(),
        type: QuantityType,
        quantity: Quantity,
        start: Date,
        end: Date,
        count: Int = 1,
        device: Device? = nil,
        metadata: [String: MetadataValue] = [:]
    ) {
        self.id = id
        self.type = type
        self.quantity = quantity
        self.startDate = start
        self.endDate = end
        self.count = count
        self.device = device
        self.metadata = metadata
    }
}

/// Beat-to-beat intervals over a time interval (HealthKit's heartbeat series sample).
public struct HeartbeatSeriesSample: Hashable, Sendable, Identifiable {
    /// One beat.
    public struct Beat: Hashable, Sendable {
        /// The beat's time, seconds after the sample's start.
        public var timeSinceStart: Double
        /// The RR interval ending at this beat, in the sensor's raw 1/1024 s ticks.
        public var rrTicks: UInt16
        /// Beats before this one were lost (a dropout, a reconnect): the interval does not follow the previous
        /// beat of the series.
        public var precededByGap: Bool

        public init(timeSinceStart: Double, rrTicks: UInt16, precededByGap: Bool = false) {
            self.timeSinceStart = timeSinceStart
            self.rrTicks = rrTicks
            self.precededByGap = precededByGap
        }

        /// The RR interval in seconds.
        public var interval: Double { Double(rrTicks) / 1024 }
    }

    public var id: UUID
    public var startDate: Date
    public var endDate: Date
    public var beats: [Beat]
    public var device: Device?
    public var metadata: [String: MetadataValue]

    public init(
        id: UUID = .random(),
        start: Date,
        end: Date,
        beats: [Beat],
        device: Device? = nil,
        metadata: [String: MetadataValue] = [:]
    ) {
        self.id = id
        self.startDate = start
        self.endDate = end
        self.beats = beats
        self.device = device
        self.metadata = metadata
    }
}

/// Any sample a workout collects.
public enum Sample: Hashable, Sendable, Identifiable {
    case quantity(QuantitySample)
    case heartbeatSeries(HeartbeatSeriesSample)
    /// An electrocardiogram or acceleration waveform.
    case waveform(WaveformSample)

    public var id: UUID {
        switch self {
        case .quantity(let sample): sample.id
        case .heartbeatSeries(let sample): sample.id
        case .waveform(let sample): sample.id
        }
    }

    public var sampleType: SampleType {
        switch self {
        case .quantity(let sample): .quantity(sample.type)
        case .heartbeatSeries: .heartbeatSeries
        case .waveform(let sample): .waveform(sample.kind)
        }
    }

    public var startDate: Date {
        switch self {
        case .quantity(let sample): sample.startDate
        case .heartbeatSeries(let sample): sample.startDate
        case .waveform(let sample): sample.startDate
        }
    }

    public var endDate: Date {
        switch self {
        case .quantity(let sample): sample.endDate
        case .heartbeatSeries(let sample): sample.endDate
        case .waveform(let sample): sample.endDate
        }
    }
}
