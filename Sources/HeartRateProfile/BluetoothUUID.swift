/// A Bluetooth UUID: a 16-bit SIG-assigned number expanded on the Bluetooth base UUID, or any 128-bit UUID.
///
/// BlueZ reports UUIDs as lower-case 128-bit strings (`0000180d-0000-1000-8000-00805f9b34fb`); ``bluezString``
/// produces exactly that, and ``init(_:)-(String)`` accepts it as well as short forms ("180D", "0x180d").
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    /// The 128 bits, most significant first.
    public let high: UInt64
    public let low: UInt64

    /// `00000000-0000-1000-8000-00805f9b34fb`; a 16-bit UUID `xxxx` is `0000xxxx-0000-1000-8000-00805f9b34fb`.
    static let baseHigh: UInt64 = 0x0000_0000_0000_1000
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    /// Creates a UUID from its 128 bits.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Expands a 16-bit SIG-assigned number on the base UUID.
    public init(_ shortValue: UInt16) {
        self.init(high: Self.baseHigh | UInt64(shortValue) << 32, low: Self.baseLow)
    }

    /// Parses a 128-bit string (any case, with or without dashes) or a 16-bit short form ("180D", "0x180D").
    public init?(_ string: String) {
        var text = Substring(string)
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text = text.dropFirst(2) }
        let digits = text.filter { $0 != "-" }
        // UInt64(_:radix:) would also take a sign; only hex digits are part of a UUID.
        guard digits.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
        if digits.count == 4, text.count == 4, let short = UInt16(digits, radix: 16) {
            self.init(short)
            return
        }
        guard digits.count == 32,
            let high = UInt64(digits.prefix(16), radix: 16),
            let low = UInt64(digits.suffix(16), radix: 16)
        else { return nil }
        if text.contains("-") {
            // Dashes, when present, must sit where RFC 4122 puts them.
            let groups = text.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
            guard groups == [8, 4, 4, 4, 12] else { return nil }
        }
        self.init(high: high, low: low)
    }

    /// The 16-bit number when this UUID sits on the base UUID, else nil.
    public var shortValue: UInt16? {
        guard low == Self.baseLow, high & 0xFFFF_0000_FFFF_FFFF == Self.baseHigh else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// Lower-case 128-bit form with dashes, as BlueZ's `UUID` and `UUIDs` properties carry it.
    public var bluezString: String {
        let hex = Self.hex(high, digits: 16) + Self.hex(low, digits: 16)
        var result = ""
        result.reserveCapacity(36)
        for (index, character) in hex.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { result.append("-") }
            result.append(character)
        }
        return result
    }

    /// `0x180D` for a SIG number, the 128-bit form otherwise.
    public var description: String {
        if let shortValue { return "0x" + Self.hex(UInt64(shortValue), digits: 4).uppercased() }
        return bluezString
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: digits - text.count) + text
    }
}

extension BluetoothUUID {
    /// Heart Rate service, 0x180D.
    public static let heartRateService = BluetoothUUID(0x180D)
    /// Heart Rate Measurement, 0x2A37 (notify).
    public static let heartRateMeasurement = BluetoothUUID(0x2A37)
    /// Body Sensor Location, 0x2A38 (read).
    public static let bodySensorLocation = BluetoothUUID(0x2A38)
    /// Heart Rate Control Point, 0x2A39 (write).
    public static let heartRateControlPoint = BluetoothUUID(0x2A39)
    /// Battery service, 0x180F.
    public static let batteryService = BluetoothUUID(0x180F)
    /// Battery Level, 0x2A19 (read, notify).
    public static let batteryLevel = BluetoothUUID(0x2A19)
    /// Device Information service, 0x180A.
    public static let deviceInformationService = BluetoothUUID(0x180A)
    /// Firmware Revision String, 0x2A26 (read).
    public static let firmwareRevisionString = BluetoothUUID(0x2A26)
}
