import Foundation
import HeartRateProfile
import Testing

/// Every vector in `Resources/hrm-vectors.json` (published payloads, each with its source), decoded and checked
/// field by field.
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

    /// The vectors file, copied into the test bundle by SwiftPM.
    ///
    /// A missing or unreadable file throws: the argument lists below are computed from it, and Swift Testing records
    /// an error there as a failing test, so the vectors can never be skipped silently.
    static func load() throws -> File {
        guard let url = Bundle.module.url(forResource: "hrm-vectors", withExtension: "json") else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "hrm-vectors.json in the test bundle"])
        }
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
    }

    @Test func theFileHasVectorsInEverySection() throws {
        let file = try Self.load()
        #expect(file.valid.count >= 10)
        #expect(file.truncated.count >= 1)
        #expect(file.invalid.count >= 2)
        let all = file.valid + file.truncated + file.invalid
        #expect(all.allSatisfy { !$0.source.isEmpty }, "every vector names where it was published")
    }

    @Test(arguments: try load().valid)
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

    @Test(arguments: try load().valid)
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

    @Test(arguments: try load().truncated)
    func truncatedVectorsKeepCompleteFields(_ vector: Vector) throws {
        let measurement = try HeartRateMeasurement(decoding: try Hex.decode(vector.hex))
        #expect(measurement.isTruncated)
        #expect(measurement.heartRate == vector.heartRate)
        #expect(measurement.energyExpended == vector.energyExpended)
        #expect(measurement.rrIntervals.map(\.ticks) == vector.rrIntervals)
    }

    @Test(arguments: try load().invalid)
    func invalidVectorsAreTypedErrors(_ vector: Vector) throws {
        let bytes = try Hex.decode(vector.hex)
        let error = try #require(throws: HeartRateMeasurement.DecodingError.self) {
            try HeartRateMeasurement(decoding: bytes)
        }
        #expect(error.payloadLength == bytes.count)
        #expect(error.offset == (bytes.isEmpty ? 0 : 1))
    }
}
