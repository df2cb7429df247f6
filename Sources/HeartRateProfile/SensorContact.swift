/// What a sensor says about skin contact, from bits 1–2 of the Heart Rate Measurement flags.
///
/// The spec gives two codes for "not supported" (0 and 1); both decode to ``notSupported``, which encodes as 0.
public enum SensorContact: String, Hashable, Sendable, CaseIterable {
    /// The sensor has no contact detection (flag bits 0b00 or 0b01).
    case notSupported
    /// Contact detection is supported and the sensor is not touching skin (0b10).
    case notDetected
    /// Contact detection is supported and skin contact is detected (0b11).
    case detected

    /// Decodes the two contact bits (already shifted down to bits 0–1).
    init(bits: UInt8) {
        switch bits & 0b11 {
        case 0b10: self = .notDetected
        case 0b11: self = .detected
        default: self = .notSupported
        }
    }

    /// The two contact bits, not yet shifted into place.
    var bits: UInt8 {
        switch self {
        case .notSupported: 0b00
        case .notDetected: 0b10
        case .detected: 0b11
        }
    }
}
