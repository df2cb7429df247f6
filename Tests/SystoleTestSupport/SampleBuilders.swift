import Foundation
import WorkoutKit

/// The instant the sample builders count from by default: a minute (and quarter-hour) boundary in 2027.
public let sampleEpoch = Date(timeIntervalSince1970: 1_800_000_000)

/// A heart-rate reading of `bpm` taken `second` seconds after `start`.
public func heartRate(
    _ bpm: Double,
    at second: Double,
    since start: Date = sampleEpoch,
    device: Device? = nil,
    count: Int = 1
) -> Sample {
    heartRate(bpm, at: start.addingTimeInterval(second), device: device, count: count)
}

/// A heart-rate reading of `bpm` taken at `date`.
public func heartRate(_ bpm: Double, at date: Date, device: Device? = nil, count: Int = 1) -> Sample {
    .quantity(
        QuantitySample(
            type: .heartRate,
            quantity: Quantity(bpm, .countPerMinute),
            start: date,
            end: date,
            count: count,
            device: device
        )
    )
}
