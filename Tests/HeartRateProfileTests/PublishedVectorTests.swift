import Foundation
import HeartRateProfile
import Testing

/// Every vector in `../shared/testdata/hrm-vectors.json`, decoded and checked field by field.
@Suite struct PublishedVectorTests {
    struct Vector: Decodable, CustomTestStringConvertible {
        var hex: String
        var heartRate: UInt16?
        var format: String?
        var sensorContact: String?
        var energyExpended: UInt16?
        var rrIntervals: [UInt16]?
        var source: String
        var note: String?
        var testDescription: String { "\(hex.isEmpty ? "(empty)" : hex) from \(source)" }
    }

    struct File: Decodable {
        var valid: [Vector]
        var truncated: [Vector]
        var invalid: [Vector]
    }

    static let file: File = {
        do {
            let data = try Data(contentsOf: try SharedTestData.url("hrm-vectors.json"))
            return try JSONDecoder().decode(File.self, from: data)
        } catch {
            // Test arguments are computed before the tests run; an empty file would run nothing, so fail here.
            fatalError("cannot load hrm-vectors.json: \(error)")
        }
    }()

    @Test func theFileHasVectorsInEverySection() {
        #expect(Self.file.valid.count >= 10)
        #expect(Self.file.truncated.count >= 1)
        #expect(Self.file.invalid.count >= 2)
    }

    @Test(arguments: Self.file.valid)
    func validVectorsDecodeToThePublishedValues(_ vector: Vector) throws {
        let bytes = try Hex.decode(vector.hex)
        let measurement = try HeartRateMeasurement(decoding: bytes)
        #expect(measurement.heartRate == vector.heartRate)
        #expect(measurement.format.rawValue == vector.format)
        #expect(measurement.sensorContact.rawValue == vector.sensorContact)
        #expect(measurement.energyExpended == vector.energyExpended)
        #expect(measurement.rrIntervals.map(\.ticks) == vector.rrIntervals)
        #expect(!measurement.isTruncated)
        #expect(measurement.isEnergyExpendedSaturated == (vector.energyExpended == 0xFFFF))
    }

    @Test(arguments: Self.file.valid)
    func validVectorsReEncodeToTheSameMeasurement(_ vector: Vector) throws {
        let bytes = try Hex.decode(vector.hex)
        let measurement = try HeartRateMeasurement(decoding: bytes)
        let reEncoded = measurement.encoded()
        #expect(try HeartRateMeasurement(decoding: reEncoded) == measurement)
        // Byte-identical unless the sender used reserved flag bits or the second "not supported" contact code,
        // which the encoder normalises away.
        let flags = bytes[0]
        if flags & 0xE0 == 0, (flags >> 1) & 0b11 != 0b01 {
            #expect(reEncoded == bytes)
        } else {
            #expect(Array(reEncoded.dropFirst()) == Array(bytes.dropFirst()))
        }
    }

    @Test(arguments: Self.file.truncated)
    func truncatedVectorsKeepCompleteFields(_ vector: Vector) throws {
        let measurement = try HeartRateMeasurement(decoding: try Hex.decode(vector.hex))
        #expect(measurement.isTruncated)
        #expect(measurement.heartRate == vector.heartRate)
        #expect(measurement.energyExpended == vector.energyExpended)
        #expect(measurement.rrIntervals.map(\.ticks) == vector.rrIntervals)
    }

    @Test(arguments: Self.file.invalid)
    func invalidVectorsAreTypedErrors(_ vector: Vector) throws {
        let bytes = try Hex.decode(vector.hex)
        let error = try #require(throws: HeartRateMeasurement.DecodingError.self) {
            try HeartRateMeasurement(decoding: bytes)
        }
        #expect(error.payloadLength == bytes.count)
        #expect(error.offset == (bytes.isEmpty ? 0 : 1))
    }
}
