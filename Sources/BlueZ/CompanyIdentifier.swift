import CBluetooth

/// A Bluetooth SIG company identifier: the key of an advertisement's manufacturer-specific data, which is how
/// systole names the maker of a sensor (0x006B → Polar).
public struct CompanyIdentifier: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 16-bit identifier as BlueZ reports it in `Device1.ManufacturerData`.
    public let rawValue: UInt16

    /// Wraps an identifier.
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// The registered company name from libbluetooth's table (`bt_compidtostr`), or nil when the identifier is
    /// not assigned (or reserved for internal use) in the table this libbluetooth was built with.
    public var name: String? {
        let name = String(cString: bt_compidtostr(Int32(rawValue)))
        return name == "not assigned" || name == "internal use" ? nil : name
    }

    /// `Polar Electro OY (0x006B)`, or `unknown company (0x1234)`.
    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        let id = "0x" + String(repeating: "0", count: 4 - hex.count) + hex
        return "\(name ?? "unknown company") (\(id))"
    }
}

extension CompanyIdentifier {
    /// Polar Electro (H10, H9, H7, Verity Sense).
    public static let polar = CompanyIdentifier(rawValue: 0x006B)
    /// Garmin International (HRM-Dual, HRM-Pro).
    public static let garmin = CompanyIdentifier(rawValue: 0x0087)
    /// Wahoo Fitness (TICKR).
    public static let wahoo = CompanyIdentifier(rawValue: 0x01FC)
    /// Apple, whose identifier Beats earbuds advertise.
    public static let apple = CompanyIdentifier(rawValue: 0x004C)
    /// Beats Electronics.
    public static let beats = CompanyIdentifier(rawValue: 0x00CC)
}
