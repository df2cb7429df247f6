import PolarMeasurementData
import PropertyBased
import Testing

/// Frames and answers a hostile or broken sensor could send: each is refused with its reason, none crashes.
@Suite struct HostileFrameTests {
    static let header: [UInt8] = [0x02, 0, 0x94, 0x35, 0x77, 0, 0, 0, 0]

    static func reason(_ bytes: [UInt8], factor: Float = 1) -> PMDFrameError.Reason? {
        do {
            _ = try PMDFrame(decoding: bytes).samples(factor: factor)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func headersWithoutSamplesAndOverlongFrames() {
        for length in 0...10 { #expect(Self.reason(Array(repeating: 0, count: length)) == .noSamples) }
        #expect(Self.reason(Array(repeating: 0, count: 513)) == .tooLong)
        // 512 bytes is the longest attribute; as ECG it is 502 sample bytes, not a whole number of samples.
        #expect(Self.reason(Array(repeating: 0, count: 512)) == .partialSample(sampleBytes: 3))
        #expect(Self.reason(Array(repeating: 0, count: 511)) == nil)
    }

    @Test func partialSamples() {
        #expect(
            Self.reason([0x00] + Array(repeating: 0, count: 8) + [0x00, 1, 2, 3, 4]) == .partialSample(sampleBytes: 3)
        )
        #expect(Self.reason(Self.header + [0x01, 1, 2, 3, 4, 5]) == .partialSample(sampleBytes: 6))
        #expect(Self.reason(Self.header + [0x02, 1, 2, 3, 4, 5, 6, 7, 8]) == .partialSample(sampleBytes: 9))
        // A compressed frame cut inside its reference sample.
        #expect(Self.reason(Self.header + [0x81, 1, 2, 3]) == .partialSample(sampleBytes: 6))
    }

    @Test func unsupportedMeasurementsAndLayouts() {
        let ppg: [UInt8] = [0x01] + Array(repeating: 0, count: 8) + [0x00, 1, 2, 3]
        #expect(Self.reason(ppg) == .unsupported(.ppg, layout: 0, compressed: false))
        let compressedECG: [UInt8] = [0x00] + Array(repeating: 0, count: 8) + [0x80, 1, 2, 3]
        #expect(Self.reason(compressedECG) == .unsupported(.ecg, layout: 0, compressed: true))
        #expect(
            Self.reason(Self.header + [0x03, 1, 2, 3]) == .unsupported(.acceleration, layout: 3, compressed: false)
        )
    }

    @Test func deltaBlocksThatLie() {
        let reference: [UInt8] = [0x81, 0, 0, 0, 0, 0, 0]
        #expect(Self.reason(Self.header + reference + [0, 5]) == .deltaWidth(0))
        #expect(
            Self.reason(Self.header + reference + [33, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]) == .deltaWidth(33)
        )
        // 255 samples of 32-bit deltas in three bytes.
        #expect(Self.reason(Self.header + reference + [32, 255, 1, 2, 3]) == .deltaBlockCut(neededBits: 32 * 255 * 3))
        // A block header cut after its width.
        #expect(Self.reason(Self.header + reference + [8]) == .deltaBlockCut(neededBits: 0))
        // Deltas that push a sample past 32 bits.
        let huge: [UInt8] =
            [32, 2] + Array(repeating: 0xFF, count: 3 * 4).enumerated().map { $0.offset % 4 == 3 ? 0x7F : 0xFF }
            + Array(repeating: 0xFF, count: 3 * 4).enumerated().map { $0.offset % 4 == 3 ? 0x7F : 0xFF }
        #expect(Self.reason(Self.header + reference + huge) == .sampleOverflow)
    }

    @Test func everyErrorSaysWhatAndWhere() throws {
        let error = try #require(throws: PMDFrameError.self) {
            _ = try PMDFrame(decoding: Self.header + [0x81, 0, 0, 0, 0, 0, 0, 0, 5]).samples()
        }
        #expect(error.description == "a delta block of 0-bit deltas at offset 16 (1–32 allowed)")
        let unsupported = try #require(throws: PMDFrameError.self) {
            _ = try PMDFrame(decoding: [0x05] + Array(repeating: 0, count: 9) + [1]).samples()
        }
        #expect(unsupported.description == "gyroscope frame type 0 is not one systole reads")
    }

    @Test func controlPointIndicationsThatLie() {
        #expect(throws: PMDControlPointMessage.DecodingError.empty) { try PMDControlPointMessage(decoding: []) }
        #expect(throws: PMDControlPointMessage.DecodingError.responseCut(length: 3)) {
            try PMDControlPointMessage(decoding: [0xF0, 2, 0])
        }
        #expect(throws: PMDControlPointMessage.DecodingError.unknownMessage(firstByte: 0x42)) {
            try PMDControlPointMessage(decoding: [0x42])
        }
        #expect(throws: PMDControlPointMessage.DecodingError.tooLong(600)) {
            try PMDControlPointMessage(decoding: [0xF0] + Array(repeating: 0, count: 599))
        }
        #expect(throws: PMDSettings.DecodingError(reason: .unknownType(0x20), offset: 0)) {
            try PMDSettings(decoding: [0x20, 1, 0])
        }
        #expect(throws: PMDSettings.DecodingError(reason: .valuesCut(.sampleRate, count: 200), offset: 0)) {
            try PMDSettings(decoding: [0x00, 200, 0x82, 0x00])
        }
        #expect(throws: PMDSettings.DecodingError(reason: .repeated(.resolution), offset: 4)) {
            try PMDSettings(decoding: [0x01, 1, 14, 0, 0x01, 1, 14, 0])
        }
    }

    static let accelerations = zip(Gen.int16(), Gen.int16(), Gen.int16()).map {
        PMDAcceleration(x: Int32($0), y: Int32($1), z: Int32($2))
    }

    @Test func encodedFramesDecodeToWhatWasEncoded() async {
        await propertyCheck(count: 500, input: Self.accelerations.array(of: 1...80), Gen.uint64()) {
            samples,
            timestamp in
            let raw = PMDFrame.acceleration(sensorTimestamp: timestamp, samples: samples)
            #expect(try PMDFrame(decoding: raw.encoded()).samples() == .acceleration(samples))
            let compressed = PMDFrame.compressedAcceleration(sensorTimestamp: timestamp, samples: samples)
            let decoded = try PMDFrame(decoding: compressed.encoded())
            #expect(decoded.sensorTimestamp == timestamp)
            #expect(try decoded.samples() == .acceleration(samples))
        }
        await propertyCheck(count: 500, input: Gen.int32(in: -8_388_608...8_388_607).array(of: 1...150)) { values in
            let frame = PMDFrame.ecg(sensorTimestamp: 7, microvolts: values)
            #expect((try? PMDFrame(decoding: frame.encoded()).samples()) == .ecg(values))
        }
    }

    @Test func cuttingAnyFrameNeverCrashes() async {
        await propertyCheck(count: 300, input: Self.accelerations.array(of: 2...40)) { samples in
            let bytes = PMDFrame.compressedAcceleration(sensorTimestamp: 1, samples: samples).encoded()
            for length in 0..<bytes.count {
                _ = try? PMDFrame(decoding: Array(bytes[..<length])).samples()
            }
        }
    }
}
