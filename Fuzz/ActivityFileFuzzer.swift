// libFuzzer entry point for the activity files `systole import` reads (FIT and TCX, WorkoutImport with FITFormat
// and WorkoutKit). Built by scripts/fuzz-decoder.sh with those modules' sources in one module
// (-sanitize=fuzzer,address).
import Foundation

/// A fixed "now", so that what is accepted does not depend on the day the fuzzer runs.
private let now = Date(timeIntervalSince1970: 1_800_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzActivityFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let activities = try? ActivityFile.read(bytes, now: now) { check(activities) }
    // The same bytes as the records of a FIT file whose header and CRC are right: random damage then reaches the
    // records' structure instead of stopping at the CRC.
    var file: [UInt8] = [12, 0x20, 0x52, 0x54] + (0..<4).map { UInt8(truncatingIfNeeded: bytes.count >> (8 * $0)) }
    file += Array(".FIT".utf8) + bytes
    let crc = FITCRC.of(file)
    file += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    if let activity = try? FITActivityReader.read(file, now: now) { check([activity]) }
    return 0
}

/// What an accepted file must give: every value within the limits the readers promise.
private func check(_ activities: [ImportedActivity]) {
    for activity in activities {
        if activity.end <= activity.start { fatalError("an activity that ends before it starts") }
        if activity.end.timeIntervalSince(activity.start) > ImportLimits.duration { fatalError("longer than a week") }
        if !ImportLimits.dates(now: now).contains(activity.start) { fatalError("a start outside the dates") }
        if activity.heartRates.contains(where: { !ImportLimits.heartRate.contains($0.beatsPerMinute) }) {
            fatalError("a heart rate outside the limits")
        }
        if zip(activity.heartRates, activity.heartRates.dropFirst()).contains(where: { $0.date > $1.date }) {
            fatalError("heart rates out of time order")
        }
        if activity.rrIntervals.contains(where: { !ImportLimits.rrInterval.contains($0) }) {
            fatalError("an RR interval outside the limits")
        }
        if let energy = activity.energyKilocalories, !ImportLimits.energy.contains(energy) {
            fatalError("energy outside the limits")
        }
    }
}
