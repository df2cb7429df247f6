import BlueZ
import Testing

@Suite struct BluetoothAddressTests {
    @Test func normalisesCaseAndSeparators() throws {
        for text in ["a0:9e:1a:12:34:56", "A0:9E:1A:12:34:56", "a0-9e-1a-12-34-56", "A0_9E_1A_12_34_56"] {
            let address = try BluetoothAddress(text)
            #expect(address.description == "A0:9E:1A:12:34:56", "\(text)")
            #expect(address.rawValue == 0xA09E_1A12_3456)
        }
    }

    @Test func bytesAndObjectPathComponentFollowTheWrittenOrder() throws {
        let address = try BluetoothAddress("00:11:22:33:44:55")
        #expect(address.bytes == [0x00, 0x11, 0x22, 0x33, 0x44, 0x55])
        #expect(address.devicePathComponent == "dev_00_11_22_33_44_55")
        #expect(BluetoothAddress(rawValue: 0x0011_2233_4455) == address)
        #expect(try BluetoothAddress("00:11:22:33:44:56") > address)
        // Each byte is two upper-case digits, a leading zero kept.
        #expect(BluetoothAddress(rawValue: 0x0A0B_C0D0_0E0F).description == "0A:0B:C0:D0:0E:0F")
        #expect(BluetoothAddress(rawValue: 0).description == "00:00:00:00:00:00")
        #expect(BluetoothAddress(rawValue: 0xFFFF_FFFF_FFFF).description == "FF:FF:FF:FF:FF:FF")
    }

    @Test func rejectsWhatIsNotAnAddress() {
        for text in [
            "", "00:11:22:33:44", "00:11:22:33:44:55:66", "0:11:22:33:44:55", "00:11:22:33:44:5G",
            "001122334455", "00:11:22:33:44:55 ", "00::1:22:33:44:55",
        ] {
            let error = #expect(throws: BluetoothAddress.ParseError.self, "\(text)") { try BluetoothAddress(text) }
            #expect(error?.text == text)
            #expect(
                error?.description
                    == "'\(text)' is not a Bluetooth address: expected six hex pairs like A0:9E:1A:12:34:56"
            )
        }
    }

    @Test func descriptionRoundTripsForRandomAddresses() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1_000 {
            let address = BluetoothAddress(rawValue: generator.next() & 0xFFFF_FFFF_FFFF)
            #expect(try BluetoothAddress(address.description) == address)
        }
    }
}

@Suite struct CompanyIdentifierTests {
    @Test func namesTheMakersOfCommonStraps() {
        #expect(CompanyIdentifier.polar.name == "Polar Electro OY")
        #expect(CompanyIdentifier.garmin.name?.hasPrefix("Garmin") == true)
        #expect(CompanyIdentifier.wahoo.name?.hasPrefix("Wahoo Fitness") == true)
        #expect(CompanyIdentifier.apple.name?.hasPrefix("Apple") == true)
        #expect(CompanyIdentifier.polar.description == "Polar Electro OY (0x006B)")
    }

    @Test func unassignedIdentifiersHaveNoName() {
        #expect(CompanyIdentifier(rawValue: 0xFFFE).name == nil)
        #expect(CompanyIdentifier(rawValue: 0xFFFF).name == nil)
        #expect(CompanyIdentifier(rawValue: 0xFFFE).description == "unknown company (0xFFFE)")
    }
}
