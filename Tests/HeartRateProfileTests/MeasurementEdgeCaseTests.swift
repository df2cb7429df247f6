import HeartRateProfile
import Testing

@Suite struct MeasurementEdgeCaseTests {
    @Test func nineRRIntervalsFillAMinimumMTUNotification() throws {
        let ticks: [UInt16] = [800, 810, 820, 830, 840, 850, 860, 870, 880]
        var bytes: [UInt8] = [0x16, 75]
        for tick in ticks { bytes += [UInt8(tick & 0xFF), UInt8(tick >> 8)] }
        #expect(bytes.count == 20)  // 23-byte ATT MTU minus the 3-byte notification header
        let measurement = try HeartRateMeasurement(decoding: bytes)
        #expect(measurement.rrIntervals.map(\.ticks) == ticks)
        #expect(!measurement.isTruncated)
        #expect(
            HeartRateMeasurement.maximumRRIntervalCount(format: .uint8, includesEnergyExpended: false) == 9
        )
        #expect(HeartRateMeasurement.maximumRRIntervalCount(format: .uint8, includesEnergyExpended: true) == 8)
        #expect(
            HeartRateMeasurement.maximumRRIntervalCount(format: .uint16, includesEnergyExpended: true) == 7
        )
    }

    @Test func uint16HeartRateWithEnergyAndRR() throws {
        // flags 0x19: uint16, energy, RR; 300 bpm; 1234 kJ; RR 200 and 1023 ticks.
        let bytes: [UInt8] = [0x19, 0x2C, 0x01, 0xD2, 0x04, 0xC8, 0x00, 0xFF, 0x03]
        let measurement = try HeartRateMeasurement(decoding: bytes)
        #expect(measurement.heartRate == 300)
        #expect(measurement.format == .uint16)
        #expect(measurement.sensorContact == .notSupported)
        #expect(measurement.energyExpended == 1234)
        #expect(measurement.rrIntervals.map(\.ticks) == [200, 1023])
        #expect(!measurement.isTruncated)
        #expect(measurement.encoded() == bytes)
    }

    @Test func allReservedBitsAreIgnored() throws {
        let plain = try HeartRateMeasurement(decoding: [0x16, 0x48, 0x54, 0x01])
        let reserved = try HeartRateMeasurement(decoding: [0xF6, 0x48, 0x54, 0x01])
        #expect(reserved == plain)
        #expect(reserved.encoded()[0] == 0x16)
    }

    @Test func bothNotSupportedContactCodesDecodeAlike() throws {
        #expect(try HeartRateMeasurement(decoding: [0x00, 60]).sensorContact == .notSupported)
        #expect(try HeartRateMeasurement(decoding: [0x02, 60]).sensorContact == .notSupported)
        #expect(try HeartRateMeasurement(decoding: [0x04, 60]).sensorContact == .notDetected)
        #expect(try HeartRateMeasurement(decoding: [0x06, 60]).sensorContact == .detected)
    }

    @Test func oddTrailingRRByteKeepsCompleteIntervals() throws {
        let measurement = try HeartRateMeasurement(decoding: [0x10, 70, 0x00, 0x04, 0x01])
        #expect(measurement.rrIntervals.map(\.ticks) == [1024])
        #expect(measurement.isTruncated)
        #expect(measurement.heartRate == 70)
    }

    @Test func energyAnnouncedButAbsentIsTruncatedNotAnError() throws {
        let none = try HeartRateMeasurement(decoding: [0x08, 70])
        #expect(none.isTruncated)
        #expect(none.energyExpended == nil)
        // With RR also announced, the one byte left belongs to the cut energy field, not to an RR value.
        let cut = try HeartRateMeasurement(decoding: [0x18, 70, 0x05])
        #expect(cut.isTruncated)
        #expect(cut.energyExpended == nil)
        #expect(cut.rrIntervals.isEmpty)
    }

    @Test func rrFlagWithNoIntervalsIsValid() throws {
        let measurement = try HeartRateMeasurement(decoding: [0x10, 70])
        #expect(measurement.rrIntervals.isEmpty)
        #expect(!measurement.isTruncated)
    }

    @Test func cutHeartRateFieldNamesTheOffset() throws {
        let error = try #require(throws: HeartRateMeasurement.DecodingError.self) {
            try HeartRateMeasurement(decoding: [0x01])
        }
        #expect(error.reason == .heartRateFieldCut(.uint16))
        #expect(error.offset == 1)
        #expect(error.description == "heart-rate field (uint16) at offset 1 needs 2 bytes, only 0 bytes are present")
        let empty = try #require(throws: HeartRateMeasurement.DecodingError.self) {
            try HeartRateMeasurement(decoding: [UInt8]())
        }
        #expect(empty.reason == .emptyPayload)
    }

    @Test func decodesFromASliceWithoutReadingOutsideIt() throws {
        let buffer: [UInt8] = [0xFF, 0x16, 72, 0x54, 0x01, 0xEE]
        let measurement = try HeartRateMeasurement(decoding: buffer[1..<5])
        #expect(measurement.heartRate == 72)
        #expect(measurement.rrIntervals.map(\.ticks) == [340])
    }

    @Test func valuesAbove255AreAlwaysEncodedAsUInt16() throws {
        let measurement = HeartRateMeasurement(heartRate: 300, format: .uint8)
        let decoded = try HeartRateMeasurement(decoding: measurement.encoded())
        #expect(decoded.heartRate == 300)
        #expect(decoded.format == .uint16)
    }

    @Test func rrConversionsAreExact() {
        let interval = RRInterval(ticks: 748)
        #expect(interval.milliseconds == 730.46875)
        #expect(interval.seconds == 0.73046875)
        #expect(interval.duration == .milliseconds(730) + .nanoseconds(468_750))
        #expect(RRInterval(ticks: 1024).duration == .seconds(1))
        #expect(RRInterval(ticks: 65535).duration.components == (seconds: 63, attoseconds: 999_023_437_500_000_000))
        for ticks in stride(from: 0, through: 65535, by: 7) {
            let interval = RRInterval(ticks: UInt16(ticks))
            #expect(interval.milliseconds * 1024 / 1000 == Double(ticks))
        }
    }

    @Test func implausibleIntervalsAreFlaggedNotDropped() throws {
        // A Garmin HRM-Dual was seen sending this: the second RR is 53/1024 s.
        let measurement = try HeartRateMeasurement(decoding: [0x10, 0x38, 0x2D, 0x04, 0x35, 0x00])
        #expect(measurement.rrIntervals.map(\.ticks) == [1069, 53])
        #expect(measurement.rrIntervals.map(\.isPhysiologicallyPlausible) == [true, false])
    }

    @Test func aHeartRateIsUsableOnlyWithContactAndAboveZero() throws {
        // Flags 0x06: contact supported and detected; 0x04: supported, not detected; 0x00: not supported.
        #expect(try HeartRateMeasurement(decoding: [0x06, 72]).usableHeartRate == 72)
        #expect(try HeartRateMeasurement(decoding: [0x00, 72]).usableHeartRate == 72)
        #expect(try HeartRateMeasurement(decoding: [0x04, 72]).usableHeartRate == nil)
        #expect(try HeartRateMeasurement(decoding: [0x06, 0]).usableHeartRate == nil)
        #expect(try HeartRateMeasurement(decoding: [0x07, 0x2C, 0x01]).usableHeartRate == 300)
    }
}
