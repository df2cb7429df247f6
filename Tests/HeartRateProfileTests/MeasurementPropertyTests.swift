import HeartRateProfile
import PropertyBased
import Testing

@Suite struct MeasurementPropertyTests {
    /// Measurements as a sender would build them: a uint8 measurement never holds a value above 255, and the RR
    /// list fits one minimum-MTU notification.
    static let measurements = zip(
        Gen.uint16(),
        Gen<HeartRateMeasurement.ValueFormat>.case,
        Gen<SensorContact>.case,
        Gen.uint16().optional,
        Gen.uint16().array(of: 0...9)
    ).map { rate, format, contact, energy, ticks in
        HeartRateMeasurement(
            heartRate: format == .uint8 ? rate % 256 : rate,
            format: format,
            sensorContact: contact,
            energyExpended: energy,
            rrIntervals: ticks.map(RRInterval.init(ticks:))
        )
    }

    @Test func encodeThenDecodeIsIdentity() async {
        await propertyCheck(count: 2_000, input: Self.measurements) { measurement in
            let decoded = try? HeartRateMeasurement(decoding: measurement.encoded())
            #expect(decoded == measurement)
        }
    }

    @Test func cuttingAnyEncodedPayloadNeverCrashesAndKeepsWhatIsComplete() async {
        await propertyCheck(count: 500, input: Self.measurements) { measurement in
            let bytes = measurement.encoded()
            let headerLength = 1 + measurement.format.byteCount
            for length in 0..<bytes.count {
                let prefix = bytes[..<length]
                guard length >= headerLength else {
                    #expect(throws: HeartRateMeasurement.DecodingError.self) {
                        try HeartRateMeasurement(decoding: prefix)
                    }
                    continue
                }
                guard let cut = try? HeartRateMeasurement(decoding: prefix) else {
                    Issue.record("a payload with a complete heart-rate field must decode")
                    continue
                }
                #expect(cut.heartRate == measurement.heartRate)
                #expect(cut.rrIntervals.count <= measurement.rrIntervals.count)
                #expect(Array(measurement.rrIntervals.prefix(cut.rrIntervals.count)) == cut.rrIntervals)
                // Any cut inside an optional field is reported; a cut on a field boundary is a valid payload
                // with fewer RR values.
                let energyLength = measurement.energyExpended == nil ? 0 : 2
                let rrBytes = length - headerLength - energyLength
                let onBoundary = rrBytes >= 0 && rrBytes % 2 == 0
                #expect(cut.isTruncated == !onBoundary)
            }
        }
    }

    @Test func arbitraryBytesNeverCrash() async {
        await propertyCheck(count: 5_000, input: Gen.uint8().array(of: 0...24)) { bytes in
            do {
                let measurement = try HeartRateMeasurement(decoding: bytes)
                #expect(bytes.count >= 1 + measurement.format.byteCount)
            } catch {
                #expect(bytes.count < 3)
            }
        }
    }
}
