// libFuzzer entry point for the PolarMeasurementData decoders (PMD frames, control-point indications, settings,
// features). Built by scripts/fuzz-decoder.sh with the module's sources (-sanitize=fuzzer,address).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPMD(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let frame = try? PMDFrame(decoding: bytes) {
        // A header read back re-encodes to the same bytes.
        if frame.encoded() != bytes { fatalError("re-encoding the frame changed its bytes") }
        for factor: Float in [1, 2.44e-4, -3e9, .nan] {
            guard let samples = try? frame.samples(factor: factor) else { continue }
            // At least one bit per delta and channel: no frame holds more samples than that allows.
            if samples.count > 1 + frame.content.count * 8 { fatalError("\(samples.count) samples from \(size) bytes") }
        }
    }
    if case .response(let response)? = try? PMDControlPointMessage(decoding: bytes) {
        if (try? PMDControlPointMessage(decoding: response.encoded())) != .response(response) {
            fatalError("an answer re-encoded reads back differently")
        }
    }
    if let settings = try? PMDSettings(decoding: bytes), settings.values[.security] == nil,
        settings.values[.factor] == nil
    {
        if (try? PMDSettings(decoding: settings.encoded())) != settings { fatalError("settings did not round-trip") }
    }
    _ = try? PMDFeatures(decoding: bytes)
    return 0
}
