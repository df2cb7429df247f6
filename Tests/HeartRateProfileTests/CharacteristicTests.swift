import HeartRateProfile
import Testing

@Suite struct BodySensorLocationTests {
    @Test func everyByteMapsAndRoundTrips() throws {
        for raw in UInt8.min...UInt8.max {
            let location = try BodySensorLocation(decoding: [raw])
            #expect(location.rawValue == raw)
            #expect(location.encoded() == [raw])
            if raw >= 7 { #expect(location == .reserved(raw)) }
        }
        #expect(BodySensorLocation(rawValue: 1) == .chest)
        #expect(BodySensorLocation(rawValue: 5).description == "ear lobe")
        #expect(BodySensorLocation(rawValue: 200).description == "reserved (200)")
    }

    @Test func emptyReadIsAnError() {
        #expect(throws: BodySensorLocation.DecodingError.emptyValue) { try BodySensorLocation(decoding: []) }
    }
}

@Suite struct HeartRateControlPointTests {
    @Test func resetIsOpcodeOne() throws {
        #expect(HeartRateControlPoint.resetEnergyExpended.encoded() == [0x01])
        #expect(try HeartRateControlPoint(decoding: [0x01]) == .resetEnergyExpended)
    }

    @Test func anyOtherValueIsNotSupportedWithATTError0x80() throws {
        for value in UInt8.min...UInt8.max where value != 0x01 {
            let error = try #require(throws: HeartRateControlPoint.DecodingError.self) {
                try HeartRateControlPoint(decoding: [value])
            }
            #expect(error == .valueNotSupported(value))
            #expect(error.attErrorCode == 0x80)
        }
        #expect(throws: HeartRateControlPoint.DecodingError.valueNotSupported(0x01)) {
            try HeartRateControlPoint(decoding: [0x01, 0x00])
        }
        #expect(throws: HeartRateControlPoint.DecodingError.emptyValue) { try HeartRateControlPoint(decoding: []) }
    }
}

@Suite struct BatteryLevelTests {
    @Test func zeroToHundredIsValid() throws {
        for percent in UInt8(0)...100 {
            #expect(try BatteryLevel(decoding: [percent]).percent == percent)
        }
    }

    @Test func aboveHundredIsInvalid() {
        for percent in UInt8(101)...255 {
            #expect(throws: BatteryLevel.DecodingError.outOfRange(percent)) { try BatteryLevel(decoding: [percent]) }
            #expect(BatteryLevel(percent: percent) == nil)
        }
        #expect(throws: BatteryLevel.DecodingError.emptyValue) { try BatteryLevel(decoding: []) }
    }
}

@Suite struct BluetoothUUIDTests {
    @Test func shortUUIDsExpandToBlueZsLowerCaseForm() {
        #expect(BluetoothUUID.heartRateService.bluezString == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID.heartRateMeasurement.bluezString == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID.batteryLevel.shortValue == 0x2A19)
        #expect(BluetoothUUID.heartRateService.description == "0x180D")
    }

    @Test func parsesEveryCommonSpelling() {
        let expected = BluetoothUUID.heartRateService
        for text in [
            "180D", "180d", "0x180D", "0000180d-0000-1000-8000-00805f9b34fb",
            "0000180D-0000-1000-8000-00805F9B34FB", "0000180d0000100080000080" + "5f9b34fb",
        ] {
            #expect(BluetoothUUID(text) == expected, "\(text)")
        }
    }

    @Test func vendorUUIDsKeepAll128Bits() throws {
        let text = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
        let uuid = try #require(BluetoothUUID(text))
        #expect(uuid.bluezString == text)
        #expect(uuid.shortValue == nil)
        #expect(uuid.description == text)
    }

    @Test func rejectsMalformedText() {
        for text in [
            "", "18", "180", "180DX", "0000180d-0000-1000-8000-00805f9b34f", "0000180d00-00-1000-8000-00805f9b34fb",
            "zzzz", "+180", "0000180d-0000-1000-8000-00805f9b34fb0",
        ] {
            #expect(BluetoothUUID(text) == nil, "\(text)")
        }
    }
}

@Suite struct HexTests {
    @Test func acceptsSeparatorsAndCase() throws {
        for text in ["16485401ec02", "16 48 54 01 EC 02", "16:48:54:01:EC:02", "0x16485401EC02", " 16-48-54-01-ec-02 "]
        {
            #expect(try Hex.decode(text) == [0x16, 0x48, 0x54, 0x01, 0xEC, 0x02], "\(text)")
        }
        #expect(try Hex.decode("") == [])
        #expect(Hex.encode([0x06, 0xAB, 0x00]) == "06AB00")
    }

    @Test func errorsNameThePosition() {
        #expect(throws: Hex.ParseError.invalidCharacter("g", position: 3)) { try Hex.decode("06 g8") }
        #expect(throws: Hex.ParseError.invalidCharacter("z", position: 2)) { try Hex.decode("0xz") }
        #expect(throws: Hex.ParseError.oddDigitCount(3)) { try Hex.decode("064") }
        #expect(throws: Hex.ParseError.invalidCharacter("٣", position: 1)) { try Hex.decode("0٣") }
    }
}
