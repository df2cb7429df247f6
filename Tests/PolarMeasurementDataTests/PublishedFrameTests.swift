import Foundation
import PolarMeasurementData
import Testing

/// Frames, answers and settings published in Polar's BLE SDK tests (Resources/pmd-vectors.json, which
/// scripts/fuzz-decoder.sh also seeds its corpus with) and the commands its client writes.
@Suite struct PublishedFrameTests {
    struct Vectors: Decodable {
        var frames: [String: String]
        var controlPoint: [String: String]
        var settings: [String: String]
    }

    static let vectors: Vectors = {
        guard let url = Bundle.module.url(forResource: "pmd-vectors", withExtension: "json"),
            let data = try? Data(contentsOf: url),
            let vectors = try? JSONDecoder().decode(Vectors.self, from: data)
        else { fatalError("Resources/pmd-vectors.json is missing or unreadable") }
        return vectors
    }()

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    @Test func ecgLayoutZeroIsThreeByteMicrovolts() throws {
        let frame = try PMDFrame(decoding: Self.bytes(Self.vectors.frames["ecg-raw-0"]!))
        #expect(frame.type == .ecg)
        #expect(frame.sensorTimestamp == 2_000_000_000)
        #expect(frame.layout == 0 && !frame.isCompressed)
        #expect(try frame.samples() == .ecg([-32_766, 32_770]))
    }

    @Test func accelerationRawLayoutOneIsInt16MilliG() throws {
        let frame = try PMDFrame(decoding: Self.bytes(Self.vectors.frames["acc-raw-1"]!))
        guard case .acceleration(let samples) = try frame.samples() else {
            Issue.record("not acceleration")
            return
        }
        #expect(samples.count == 36)
        #expect(samples[0] == PMDAcceleration(x: -9, y: -1, z: 999))
        #expect(samples[1] == PMDAcceleration(x: -8, y: -2, z: 997))
    }

    @Test func accelerationCompressedLayoutZeroIsScaledFromGToMilliG() throws {
        let frame = try PMDFrame(decoding: Self.bytes(Self.vectors.frames["acc-compressed-0"]!))
        #expect(frame.isCompressed && frame.layout == 0)
        let factor: Float = 2.44e-4
        guard case .acceleration(let samples) = try frame.samples(factor: factor) else {
            Issue.record("not acceleration")
            return
        }
        #expect(samples.count == 1 + 56)
        // The SDK's own expectation: the reference, then the reference plus (+190, −105, −85), scaled to milli-g.
        func milliG(_ value: Int32) -> Int32 { Int32(Float(value) * (factor * 1000)) }
        #expect(samples[0] == PMDAcceleration(x: milliG(1905), y: milliG(27_376), z: milliG(-29_282)))
        #expect(samples[1] == PMDAcceleration(x: milliG(1905 + 190), y: milliG(27_376 - 105), z: milliG(-29_282 - 85)))
        // Within the ±8 G range the sensor was set to.
        #expect(samples.allSatisfy { max(abs($0.x), abs($0.y), abs($0.z)) <= 8000 })
    }

    @Test func accelerationCompressedLayoutOneAddsSignedDeltas() throws {
        let frame = try PMDFrame(decoding: Self.bytes(Self.vectors.frames["acc-compressed-1"]!))
        #expect(frame.sensorTimestamp == 0x65)
        #expect(
            try frame.samples()
                == .acceleration([PMDAcceleration(x: -15, y: 20, z: 1008), PMDAcceleration(x: -20, y: 17, z: 1008)])
        )
    }

    @Test func controlPointAnswers() throws {
        let success = try PMDControlPointMessage(
            decoding: Self.bytes(Self.vectors.controlPoint["settings-answer-acc"]!)
        )
        #expect(
            success
                == .response(
                    PMDResponse(
                        opcode: .getSettings,
                        type: .acceleration,
                        status: .success,
                        more: false,
                        parameters: [0xFF, 0xFF, 0xFF]
                    )
                )
        )
        let failure = try PMDControlPointMessage(decoding: Self.bytes(Self.vectors.controlPoint["error-answer-mag"]!))
        #expect(
            failure
                == .response(
                    PMDResponse(
                        opcode: .getSettings,
                        type: .magnetometer,
                        status: .invalidResolution,
                        more: false,
                        parameters: []
                    )
                )
        )
        #expect(
            try PMDControlPointMessage(decoding: [0x01, 0x00, 0x02]) == .measurementStopped([.ecg, .acceleration])
        )
        #expect(PMDStatus.deviceInCharger.description == "the strap is in its charger")
        #expect(PMDStatus(rawValue: 200).description == "status 200")
    }

    @Test func settingsWithSeveralRanges() throws {
        let settings = try PMDSettings(decoding: Self.bytes(Self.vectors.settings["acc-52hz"]!))
        #expect(settings[.sampleRate] == 52)
        #expect(settings[.resolution] == 16)
        #expect(settings.values[.range] == [245, 500, 1000, 2000])
        #expect(settings[.channels] == 3)
        #expect(settings.values[.factor] == nil)
        #expect(settings.factor == 1)
    }

    @Test func commandsAsTheSDKWritesThem() {
        #expect(PMDCommand.startH10ECG.encoded() == Self.bytes("02 00 00 01 82 00 01 01 0e 00"))
        #expect(
            PMDCommand.startAcceleration(rate: 200, range: 8).encoded()
                == Self.bytes("02 02 00 01 c8 00 01 01 10 00 02 01 08 00")
        )
        #expect(PMDCommand.stop(.ecg).encoded() == [0x03, 0x00])
        #expect(PMDCommand.getSettings(.acceleration).encoded() == [0x01, 0x02])
    }

    @Test func featuresOfAnH10() throws {
        let features = try PMDFeatures(decoding: Self.bytes(Self.vectors.controlPoint["features-h10"]!))
        #expect(features.offers(.ecg) && features.offers(.acceleration))
        #expect(!features.offers(.ppg) && !features.offers(.gyroscope))
        #expect(PMDFeatures([.ecg, .acceleration]).encoded() == Self.bytes("0f 05 00"))
        #expect(throws: PMDFeatures.DecodingError.notAFeatureRead(firstByte: 0xF0)) {
            try PMDFeatures(decoding: [0xF0, 1])
        }
    }
}
