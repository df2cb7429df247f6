import CBluetooth

/// A Bluetooth device address (BD_ADDR), validated and normalised by libbluetooth.
///
/// Written the way BlueZ writes it: six upper-case hex pairs separated by colons, most significant first
/// (`A0:9E:1A:12:34:56`). Parsing accepts either case and `-` or `_` as separators, so an address copied from
/// a BlueZ object path (`dev_A0_9E_1A_12_34_56`) or from a phone's settings screen works too.
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 48 address bits, most significant byte first as written.
    public let rawValue: UInt64

    /// Why a string is not a Bluetooth address.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The text that was given.
        public let text: String

        public var description: String {
            "'\(text)' is not a Bluetooth address: expected six hex pairs like A0:9E:1A:12:34:56"
        }
    }

    /// Creates an address from its 48 bits (higher bits are ignored).
    public init(rawValue: UInt64) {
        self.rawValue = rawValue & 0xFFFF_FFFF_FFFF
    }

    /// Parses and normalises an address; throws ``ParseError`` when `text` is not one.
    public init(_ text: String) throws(ParseError) {
        let colons = String(text.map { $0 == "-" || $0 == "_" ? ":" : $0 })
        // bachk checks the exact "XX:XX:XX:XX:XX:XX" shape (17 characters, hex pairs, colons).
        guard colons.utf8.count == 17, bachk(colons) == 0 else { throw ParseError(text: text) }
        var address = bdaddr_t()
        guard str2ba(colons, &address) == 0 else { throw ParseError(text: text) }
        // bdaddr_t stores the address least significant byte first.
        let b = address.b
        let bytes = [b.5, b.4, b.3, b.2, b.1, b.0]
        self.init(rawValue: bytes.reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// The six bytes, most significant first (as written).
    public var bytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> (8 * (5 - $0))) }
    }

    /// `A0:9E:1A:12:34:56`: upper-case hex pairs, as libbluetooth's `ba2str` writes them. Formatted here rather
    /// than by `ba2str`: the daemon writes every reading's address, and two buffers and a C call per reading showed
    /// in profiles.
    public var description: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(17)
        for shift in stride(from: 40, through: 0, by: -8) {
            let byte = Int(truncatingIfNeeded: rawValue >> UInt64(shift)) & 0xFF
            if shift != 40 { text.append(UInt8(ascii: ":")) }
            text.append(digits[byte >> 4])
            text.append(digits[byte & 0xF])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The last element of the device's object path under its adapter: `dev_A0_9E_1A_12_34_56`.
    public var devicePathComponent: String {
        "dev_" + description.replacingColons(with: "_")
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension String {
    fileprivate func replacingColons(with separator: Character) -> String {
        String(map { $0 == ":" ? separator : $0 })
    }
}
