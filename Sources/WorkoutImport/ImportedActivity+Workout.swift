import Foundation
import WorkoutKit

extension ImportedActivity {
    /// Workout metadata: the format an imported workout was read from ("FIT", "TCX"); recorded workouts have none.
    public static let formatKey = "systole.imported"
    /// Workout metadata: the device that recorded an imported workout, as ``source``. A workout with the same start
    /// and source is the same activity imported again.
    public static let sourceKey = "systole.importedFrom"

    /// The device as a workout's and its samples' device.
    public var device: Device {
        Device(name: recorder.product, manufacturer: recorder.manufacturer)
    }

    /// The recorder's manufacturer, product and serial number in one text: what tells two devices apart.
    public var source: String {
        [recorder.manufacturer, recorder.product, recorder.serialNumber].map { $0 ?? "" }.joined(separator: " / ")
    }

    /// The workout this activity makes, with its samples, as a recording would have made them: a pause and a
    /// resume event per pause, a lap event per lap, one heart-rate sample per reading, the RR intervals as one
    /// heartbeat series from the start (a file gives them no times of their own), the file's energy as one
    /// sample over the workout; statistics over the readings outside pauses.
    public func workout(id: UUID = .random()) -> (workout: Workout, samples: [Sample]) {
        let device = device
        var samples: [Sample] = []
        samples.reserveCapacity(heartRates.count + 2)
        var heartRate = Statistics(quantityType: .heartRate, startDate: start, endDate: end)
        var pauseIndex = 0
        for reading in heartRates {
            samples.append(
                .quantity(
                    QuantitySample(
                        type: .heartRate,
                        quantity: Quantity(reading.beatsPerMinute, .countPerMinute),
                        start: reading.date,
                        end: reading.date,
                        device: device
                    )
                )
            )
            // Readings are in time order, so the pauses are walked once.
            while pauseIndex < pauses.count, pauses[pauseIndex].end <= reading.date { pauseIndex += 1 }
            let paused = pauseIndex < pauses.count && pauses[pauseIndex].start <= reading.date
            if !paused, reading.date < end {
                heartRate.add(reading.beatsPerMinute, start: reading.date, end: reading.date)
            }
        }
        samples += heartbeatSeries(device: device).map(Sample.heartbeatSeries)
        var statistics: [String: Statistics] = [:]
        if heartRate.readingCount > 0 { statistics[QuantityType.heartRate.identifier] = heartRate }
        if let kilocalories = energyKilocalories, kilocalories > 0 {
            let energy = Quantity(kilocalories * 4.184, .kilojoule)
            samples.append(
                .quantity(
                    QuantitySample(type: .activeEnergyBurned, quantity: energy, start: start, end: end, device: device)
                )
            )
            var sum = Statistics(quantityType: .activeEnergyBurned, startDate: start, endDate: end)
            sum.add(energy.value, start: start, end: end)
            statistics[QuantityType.activeEnergyBurned.identifier] = sum
        }
        let paused = pauses.reduce(0.0) { $0 + $1.duration }
        let workout = Workout(
            id: id,
            configuration: WorkoutConfiguration(activityType: activity),
            startDate: start,
            endDate: end,
            duration: max(0, end.timeIntervalSince(start) - paused),
            events: events,
            activities: [],
            metadata: [Self.formatKey: .string(format.rawValue), Self.sourceKey: .string(source)],
            statistics: statistics,
            devices: [device]
        )
        return (workout, samples)
    }

    /// Pause and resume events and lap events, in time order.
    private var events: [WorkoutEvent] {
        let pauseEvents = pauses.flatMap { pause in
            [WorkoutEvent(type: .pause, start: pause.start), WorkoutEvent(type: .resume, start: pause.end)]
        }
        let lapEvents = laps.map { WorkoutEvent(type: .lap, start: $0.start, end: $0.end) }
        return (pauseEvents + lapEvents).sorted { $0.startDate < $1.startDate }
    }

    /// The RR intervals as beats timed from the start, in the 1/1024 s ticks a strap sends (a millisecond from a
    /// FIT file survives the trip: ticks back to milliseconds round to the same value), in series of at most
    /// ``beatsPerSeries`` beats: a replica and the store's queries take samples of a recording's size.
    private func heartbeatSeries(device: Device) -> [HeartbeatSeriesSample] {
        var series: [HeartbeatSeriesSample] = []
        var elapsed = 0.0
        var index = rrIntervals.startIndex
        while index < rrIntervals.endIndex {
            let seriesStart = elapsed
            let end = min(index + Self.beatsPerSeries, rrIntervals.endIndex)
            let beats = rrIntervals[index..<end].map { seconds in
                elapsed += seconds
                return HeartbeatSeriesSample.Beat(
                    timeSinceStart: elapsed - seriesStart,
                    rrTicks: UInt16((seconds * 1024).rounded())
                )
            }
            series.append(
                HeartbeatSeriesSample(
                    start: start + seriesStart,
                    end: start + elapsed,
                    beats: beats,
                    device: device
                )
            )
            index = end
        }
        return series
    }

    /// The most beats in one heartbeat series sample of an import.
    public static let beatsPerSeries = 1_000
}
