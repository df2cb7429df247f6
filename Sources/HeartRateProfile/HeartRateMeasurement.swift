/// A decoded Heart Rate Measurement (characteristic 0x2A37), with every field the service defines.
///
/// Wire layout (little-endian): `flags:u8 | heart rate:u8 or u16 | energy expended:u16? | RR:u16 × n`.
/// Decode with ``init(decoding:)``; encode with ``encoded()``.
public struct HeartRateMeasurement: Hashable, Sendable {
    /// Width of the heart-rate field on the wire (flag bit 0).
    public enum ValueFormat: String, Hashable, Sendable, CaseIterable {
        /// One byte, 0–255 bpm.
        case uint8
        /// Two bytes, 0–65 535 bpm; sensors use it for values above 255 or by habit.
        case uint16

        /// Bytes the heart-rate field takes on the wire.
        public var byteCount: Int { self == .uint8 ? 1 : 2 }
    }

    /// Beats per minute. 0 is a real value (no beat detected yet, contact just regained), not a disconnect.
    public var heartRate: UInt16

    /// How the heart rate was (or will be) encoded. ``encoded()`` writes `uint16` whenever the value does not fit
    /// in one byte, whatever this says.
    public var format: ValueFormat

    /// Skin contact as reported by the sensor.
    public var sensorContact: SensorContact

    /// The heart rate worth recording and showing: nil when the sensor reports no skin contact (a strap not worn
    /// has no heart rate, whatever its field says) or sends 0 (no beat detected yet), never 0 bpm. The one rule
    /// every consumer of a measurement follows: the workout's samples, the live log, the control API, the web page.
    public var usableHeartRate: UInt16? {
        sensorContact == .notDetected || heartRate == 0 ? nil : heartRate
    }

    /// Energy expended in kilojoules since the last reset, when this notification carries the field
    /// (sensors usually send it about once every 10 notifications).
    public var energyExpended: UInt16?

    /// RR intervals carried by this notification, oldest first.
    public var rrIntervals: [RRInterval]

    /// True when a field the flags announced was cut short (the energy field, or an odd trailing byte in the RR
    /// area). Every complete field before the cut is kept.
    public var isTruncated: Bool

    /// The energy-expended value a sensor sends when its counter is full. It stays there until a client writes
    /// the reset opcode to the Heart Rate Control Point.
    public static let saturatedEnergyExpended: UInt16 = 0xFFFF

    /// Whether the energy counter has saturated (0xFFFF kJ) and should be reset through the control point.
    public var isEnergyExpendedSaturated: Bool { energyExpended == Self.saturatedEnergyExpended }

    /// Creates a measurement from its fields.
    public init(
        heartRate: UInt16,
        format: ValueFormat = .uint8,
        sensorContact: SensorContact = .notSupported,
        energyExpended: UInt16? = nil,
        rrIntervals: [RRInterval] = [],
        isTruncated: Bool = false
    ) {
        self.heartRate = heartRate
        self.format = format
        self.sensorContact = sensorContact
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
        self.isTruncated = isTruncated
    }
}

extension HeartRateMeasurement {
    /// Bit positions in the flags byte.
    enum Flag {
        static let valueFormatUInt16: UInt8 = 1 << 0
        static let contactShift: UInt8 = 1
        static let energyExpendedPresent: UInt8 = 1 << 3
        static let rrIntervalsPresent: UInt8 = 1 << 4
    }

    /// The largest number of RR intervals one notification can carry with the given ATT MTU (default 23, the
    /// minimum every LE link supports): a notification's payload is `mtu - 3` bytes.
    public static func maximumRRIntervalCount(
        format: ValueFormat,
        includesEnergyExpended: Bool,
        attMTU: Int = 23
    ) -> Int {
        let fixed = 1 + format.byteCount + (includesEnergyExpended ? 2 : 0)
        return max(0, (attMTU - 3 - fixed) / 2)
    }
}
