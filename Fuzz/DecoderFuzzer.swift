// libFuzzer entry point for the HeartRateProfile decoders. Built by scripts/fuzz-decoder.sh together with the
// module's sources (-sanitize=fuzzer,address), so AddressSanitizer watches every read the decoders make.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    do {
        let measurement = try HeartRateMeasurement(decoding: bytes)
        // Invariants a consumer relies on: a decoded measurement re-encodes to something that decodes the same,
        // except for the truncation flag, which the encoder never sets.
        var expected = measurement
        expected.isTruncated = false
        let again = try HeartRateMeasurement(decoding: measurement.encoded())
        if again != expected { fatalError("re-encoding changed \(measurement) into \(again)") }
        if measurement.rrIntervals.count > size / 2 { fatalError("more RR values than bytes") }
    } catch {
        if size >= 3 { fatalError("a payload of \(size) bytes always holds a heart-rate field: \(error)") }
    }
    _ = try? BodySensorLocation(decoding: bytes)
    _ = try? BatteryLevel(decoding: bytes)
    _ = try? HeartRateControlPoint(decoding: bytes)
    // Hex text is user input to `systole decode`.
    _ = try? Hex.decode(String(decoding: bytes, as: UTF8.self))
    return 0
}
