/// How a quantity type's samples combine.
public enum AggregationStyle: String, Hashable, Sendable, Codable {
    /// Point readings (heart rate): average, minimum, maximum, most recent.
    case discrete
    /// Amounts that add up (energy, water): sum.
    case cumulative
}

/// A kind of quantity samples, with its unit dimension and how samples combine. Extend with your own by
/// creating more (the identifier must be unique).
public struct QuantityType: Hashable, Sendable, Codable, CustomStringConvertible {
    /// A stable identifier, stored with every sample (`heartRate`).
    public let identifier: String
    public let aggregationStyle: AggregationStyle
    /// The unit values are stored in.
    public let canonicalUnit: Unit

    public init(identifier: String, aggregationStyle: AggregationStyle, canonicalUnit: Unit) {
        self.identifier = identifier
        self.aggregationStyle = aggregationStyle
        self.canonicalUnit = canonicalUnit
    }

    /// Heart rate in count/min (discrete).
    public static let heartRate = QuantityType(
        identifier: "heartRate",
        aggregationStyle: .discrete,
        canonicalUnit: .countPerMinute
    )
    /// Active energy burned in kJ (cumulative); kcal converts.
    public static let activeEnergyBurned = QuantityType(
        identifier: "activeEnergyBurned",
        aggregationStyle: .cumulative,
        canonicalUnit: .kilojoule
    )
    /// Water drunk, in mL (cumulative).
    public static let dietaryWater = QuantityType(
        identifier: "dietaryWater",
        aggregationStyle: .cumulative,
        canonicalUnit: .milliliter
    )

    /// The quantity types systole knows, for parsing stored identifiers and user input.
    public static let known: [QuantityType] = [.heartRate, .activeEnergyBurned, .dietaryWater]

    public init?(identifier: String) {
        guard let type = Self.known.first(where: { $0.identifier == identifier }) else { return nil }
        self = type
    }

    public var description: String { identifier }
}

/// A type of sample a workout collects: a quantity type, the heartbeat series (RR intervals) or a waveform.
public enum SampleType: Hashable, Sendable, CustomStringConvertible {
    case quantity(QuantityType)
    /// Beat-to-beat intervals, HealthKit's heartbeat series.
    case heartbeatSeries
    /// A waveform: the electrocardiogram or the acceleration.
    case waveform(WaveformSample.Kind)

    public static let heartRate = SampleType.quantity(.heartRate)
    public static let activeEnergyBurned = SampleType.quantity(.activeEnergyBurned)
    public static let dietaryWater = SampleType.quantity(.dietaryWater)
    public static let electrocardiogram = SampleType.waveform(.electrocardiogram)
    public static let acceleration = SampleType.waveform(.acceleration)

    /// A stable identifier (`heartRate`, `heartbeatSeries`).
    public var identifier: String {
        switch self {
        case .quantity(let type): type.identifier
        case .heartbeatSeries: "heartbeatSeries"
        case .waveform(let kind): kind.rawValue
        }
    }

    public init?(identifier: String) {
        if identifier == "heartbeatSeries" {
            self = .heartbeatSeries
        } else if let kind = WaveformSample.Kind(rawValue: identifier) {
            self = .waveform(kind)
        } else if let type = QuantityType(identifier: identifier) {
            self = .quantity(type)
        } else {
            return nil
        }
    }

    public var description: String { identifier }
}
