// libFuzzer entry point for the activity files `systole import` reads (FIT and TCX, WorkoutImport with FITFormat
// and WorkoutKit). Built by scripts/fuzz-decoder.sh with those modules' sources in one module
// (-sanitize=fuzzer,address).
import Foundation

/// A fixed "now", so that what is accepted does not depend on the day the fuzzer runs.
private let now = Date(timeIntervalSince1970: 1_800_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzActivityFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // ActivityFile.read checks what it returns (ImportedActivity.check): here it must only not crash or hang.
    _ = try? ActivityFile.read(bytes, now: now)
    // The same bytes as the records of a FIT file whose header and CRC are right: random damage then reaches the
    // records' structure instead of stopping at the CRC. The reader alone, without ActivityFile's whole check: what
    // it accepts must pass that check (the readers promise every value within the limits, in time order).
    var file: [UInt8] = [12, 0x20, 0x52, 0x54] + (0..<4).map { UInt8(truncatingIfNeeded: bytes.count >> (8 * $0)) }
    file += Array(".FIT".utf8) + bytes
    let crc = FITCRC.of(file)
    file += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    if let activity = try? FITActivityReader.read(file, now: now) {
        do {
            try ImportedActivity.check([activity], now: now)
        } catch {
            fatalError("the FIT reader accepted an activity the import refuses: \(error)")
        }
    }
    return 0
}
