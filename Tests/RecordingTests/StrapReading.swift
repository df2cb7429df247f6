import BlueZ
import Foundation
import HeartRateProfile
import HeartRateSensors

@testable import Recording

/// A reading of `bpm` (sensor contact detected) from the Polar H10 the daemon's in-process tests use, received now
/// by the clock and at `date` by the workout's.
func strapReading(
    _ bpm: UInt8,
    at date: Date,
    address: String = "A0:9E:1A:94:8D:23",
    athlete: String? = nil
) throws -> SensorReport {
    .heartRate(
        DaemonReading(
            reading: HeartRateReading(
                sensor: try BluetoothAddress(address),
                measurement: try HeartRateMeasurement(decoding: [0x06, bpm]),
                receivedAt: .now,
                receivedDate: date,
                beats: [],
                isContinuous: true
            ),
            name: "Polar H10 1A2B3C4D",
            athlete: athlete
        )
    )
}
