/// The kinds of device the simulator plays, each behaving as that kind of device does: heart-rate sensors, and a
/// keyboard that is not one (for testing what a client lets near it).
public enum SensorModel: String, Codable, Sendable, CaseIterable {
    /// A Polar H10-like chest strap: 1 Hz, contact detection, RR intervals, no energy field.
    case polarH10 = "polar-h10"
    /// A Garmin HRM-like strap: 1 Hz, RR intervals, energy expended every 10th notification.
    case garminHRM = "garmin-hrm"
    /// A Wahoo TICKR-like strap: 1 Hz, contact detection, RR intervals, energy every 10th notification.
    case wahooTICKR = "wahoo-tickr"
    /// Powerbeats Pro 2-like earbuds: one notification about every 5 s, heart rate only, and pairing required
    /// before notifications are allowed.
    case powerbeatsPro2 = "powerbeats-pro-2"
    /// A Bluetooth keyboard, not a heart-rate sensor: it advertises HID over GATT (0x1812), has no Heart Rate
    /// service and never notifies. What a hostile device next to a sensor looks like.
    case keyboard

    /// Bluetooth SIG company identifier in its advertised manufacturer data.
    var companyID: UInt16 {
        switch self {
        case .polarH10: 0x006B
        case .garminHRM: 0x0087
        case .wahooTICKR: 0x01FC
        case .powerbeatsPro2: 0x004C
        case .keyboard: 0x0006
        }
    }

    /// Manufacturer Name String (0x2A29) in Device Information.
    var manufacturerName: String {
        switch self {
        case .polarH10: "Polar Electro Oy"
        case .garminHRM: "Garmin"
        case .wahooTICKR: "Wahoo Fitness"
        case .powerbeatsPro2: "Apple Inc."
        case .keyboard: "Microsoft"
        }
    }

    /// The first three address bytes (the maker's OUI for public addresses).
    var addressPrefix: [UInt8] {
        switch self {
        case .polarH10: [0xA0, 0x9E, 0x1A]
        case .garminHRM: [0xC8, 0x3E, 0x99]
        case .wahooTICKR: [0xF0, 0x1C, 0x2D]
        case .powerbeatsPro2: [0x5C, 0x1B, 0xF4]
        case .keyboard: [0xDC, 0x2C, 0x26]
        }
    }

    /// The advertised name, built from a per-device number like the real devices do.
    func name(serial: UInt32) -> String {
        switch self {
        case .polarH10: "Polar H10 " + hex(serial, digits: 8)
        case .garminHRM: "HRM-Pro:" + String(serial % 1_000_000).leftPadded(to: 6)
        case .wahooTICKR: "TICKR " + hex(serial & 0xFFFF, digits: 4)
        case .powerbeatsPro2: "Powerbeats Pro 2"
        case .keyboard: "Keyboard " + hex(serial & 0xFFFF, digits: 4)
        }
    }

    var defaultRate: Double { self == .powerbeatsPro2 ? 0.2 : 1 }
    var sendsRR: Bool { self != .powerbeatsPro2 }
    var sendsEnergy: Bool { self == .garminHRM || self == .wahooTICKR }
    var detectsContact: Bool { self == .polarH10 || self == .wahooTICKR }
    var requiresPairing: Bool { self == .powerbeatsPro2 }
    /// Body Sensor Location (0x2A38): chest for straps, ear lobe for earbuds.
    var bodySensorLocation: UInt8 { self == .powerbeatsPro2 ? 5 : 1 }
    var addressType: String { self == .powerbeatsPro2 ? "random" : "public" }
    /// GAP appearance: 0x0341 heart-rate belt, 0x0941 earbud, 0x03C1 keyboard.
    var appearance: UInt16 {
        switch self {
        case .powerbeatsPro2: 0x0941
        case .keyboard: 0x03C1
        default: 0x0341
        }
    }
    /// Whether it offers the Heart Rate service (0x180D).
    var isHeartRateSensor: Bool { self != .keyboard }
}

func hex(_ value: UInt32, digits: Int) -> String {
    String(String(value, radix: 16, uppercase: true).leftPadded(to: digits).suffix(digits))
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
