/// The FIT SDK's CRC-16 (polynomial 0xA001 over nibbles).
public enum FITCRC {
    private static let table: [UInt16] = [
        0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
        0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400,
    ]

    /// The CRC of `bytes`, continuing from `start` (the CRC of what came before them).
    public static func of(_ bytes: some Sequence<UInt8>, startingAt start: UInt16 = 0) -> UInt16 {
        var crc = start
        for byte in bytes {
            var tmp = table[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ tmp ^ table[Int(byte & 0xF)]
            tmp = table[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ tmp ^ table[Int(byte >> 4 & 0xF)]
        }
        return crc
    }
}
