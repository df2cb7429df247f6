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

    /// The workout this activity makes, as a recording would have made it: a pause and a resume event per pause, a
    /// lap event per lap, statistics over the readings outside pauses, the file's energy; its samples come from
    /// ``forEachSampleBatch(_:)``.
    public func workout(id: UUID = .random()) -> Workout {
        var heartRate = Statistics(quantityType: .heartRate, startDate: start, endDate: end)
        var pauseIndex = 0
        for reading in heartRates {
            // Readings are in time order, so the pauses are walked once.
            while pauseIndex < pauses.count, pauses[pauseIndex].end <= reading.date { pauseIndex += 1 }
            let paused = pauseIndex < pauses.count && pauses[pauseIndex].start <= reading.date
            if !paused, reading.date < end {
                heartRate.add(reading.beatsPerMinute, start: reading.date, end: reading.date)
            }
        }
        var statistics: [String: Statistics] = [:]
        if heartRate.readingCount > 0 { statistics[QuantityType.heartRate.identifier] = heartRate }
        if let energy = energy {
            var sum = Statistics(quantityType: .activeEnergyBurned, startDate: start, endDate: end)
            sum.add(energy.value, start: start, end: end)
            statistics[QuantityType.activeEnergyBurned.identifier] = sum
        }
        let paused = pauses.reduce(0.0) { $0 + $1.duration }
        return Workout(
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
    }

    /// Hands the workout's samples to `body` a batch at a time (at most ``samplesPerBatch`` readings or beats), so
    /// they never all exist at once: one heart-rate sample per reading, the RR intervals as heartbeat series timed
    /// from the start (a file gives them no times of their own), the file's energy as one sample over the workout.
    public func forEachSampleBatch(_ body: ([Sample]) throws -> Void) rethrows {
        let device = device
        var index = heartRates.startIndex
        while index < heartRates.endIndex {
            let end = min(index + Self.samplesPerBatch, heartRates.endIndex)
            try body(
                heartRates[index..<end].map { reading in
                    .quantity(
                        QuantitySample(
                            type: .heartRate,
                            quantity: Quantity(reading.beatsPerMinute, .countPerMinute),
                            start: reading.date,
                            end: reading.date,
                            device: device
                        )
                    )
                }
            )
            index = end
        }
        var elapsed = 0.0
        var beat = rrIntervals.startIndex
        while beat < rrIntervals.endIndex {
            var series: [Sample] = []
            let batchEnd = min(beat + Self.samplesPerBatch, rrIntervals.endIndex)
            while beat < batchEnd {
                let end = min(beat + Self.beatsPerSeries, batchEnd)
                series.append(
                    .heartbeatSeries(heartbeatSeries(rrIntervals[beat..<end], after: &elapsed, device: device))
                )
                beat = end
            }
            try body(series)
        }
        if let energy {
            try body([
                .quantity(
                    QuantitySample(type: .activeEnergyBurned, quantity: energy, start: start, end: end, device: device)
                )
            ])
        }
    }

    /// The file's energy, when it gives some.
    private var energy: Quantity? {
        guard let kilocalories = energyKilocalories, kilocalories > 0 else { return nil }
        return Quantity(kilocalories * 4.184, .kilojoule)
    }

    /// Pause and resume events and lap events, in time order.
    private var events: [WorkoutEvent] {
        let pauseEvents = pauses.flatMap { pause in
            [WorkoutEvent(type: .pause, start: pause.start), WorkoutEvent(type: .resume, start: pause.end)]
        }
        let lapEvents = laps.map { WorkoutEvent(type: .lap, start: $0.start, end: $0.end) }
        return (pauseEvents + lapEvents).sorted { $0.startDate < $1.startDate }
    }

    /// RR intervals as one series of beats, the first starting `elapsed` seconds after the activity's start, in the
    /// 1/1024 s ticks a strap sends (a millisecond from a FIT file survives the trip: ticks back to milliseconds
    /// round to the same value).
    private func heartbeatSeries(
        _ intervals: ArraySlice<Double>,
        after elapsed: inout Double,
        device: Device
    ) -> HeartbeatSeriesSample {
        let seriesStart = elapsed
        let beats = intervals.map { seconds in
            elapsed += seconds
            return HeartbeatSeriesSample.Beat(
                timeSinceStart: elapsed - seriesStart,
                rrTicks: UInt16((seconds * 1024).rounded())
            )
        }
        return HeartbeatSeriesSample(start: start + seriesStart, end: start + elapsed, beats: beats, device: device)
    }

    /// The most beats in one heartbeat series sample of an import: a replica and the store's queries take samples
    /// of about a recording's size.
    public static let beatsPerSeries = 1_000
    /// The most readings or beats in one batch of ``forEachSampleBatch(_:)``.
    public static let samplesPerBatch = 10_000
}
