import Foundation
import WorkoutKit

/// Gathers what a recording keeps of a workout's samples (readings, beats and measured energy, per sensor) a chunk
/// at a time, so a long workout is never held as samples all at once: a reading takes 16 bytes here, a stored
/// sample ten times that.
///
/// With a ``limit``, a workout with more readings, beats and energy measurements than that is refused (``TooLarge``)
/// as soon as the count passes it, before more is read.
public struct SampleCollector: Sendable {
    /// The most readings, beats and energy measurements (counted together) an export or an analysis reads by
    /// default: about 16 MB here, some three days of a strap's readings at one a second with their beats, beyond
    /// any honest workout.
    public static let defaultLimit = 1_000_000

    /// A workout with more readings, beats and energy measurements than the limit.
    public struct TooLarge: Error, Sendable, CustomStringConvertible {
        /// The limit passed (the count when it was refused is just above it).
        public var limit: Int

        public init(limit: Int) {
            self.limit = limit
        }

        public var description: String {
            "the workout holds more than \(limit) heart-rate readings, beats and energy measurements, more than "
                + "systoled reads for one export or analysis: no file or analysis can be made of it (a workout of "
                + "several days left running?); its samples stay in the store"
        }
    }

    /// The most readings, beats and energy measurements taken, nil for no limit.
    public let limit: Int?
    /// Readings, beats and energy measurements taken so far.
    public private(set) var count = 0
    private var readingsByDevice: [String: [ActivityRecording.Reading]] = [:]
    private var beatsByDevice: [String: [ActivityRecording.Beat]] = [:]
    private var energyReadings: [ActivityRecording.EnergyReading] = []

    public init(limit: Int? = SampleCollector.defaultLimit) {
        self.limit = limit
    }

    /// Takes a chunk of the workout's samples (as the store returns them, series unpacked), in any order.
    public mutating func add(_ samples: some Sequence<Sample>) throws(TooLarge) {
        for sample in samples {
            switch sample {
            case .quantity(let quantity) where quantity.type == .heartRate:
                try count(1)
                readingsByDevice[quantity.device?.address ?? "", default: []].append(
                    .init(date: quantity.startDate, bpm: quantity.quantity.value)
                )
            case .quantity(let quantity) where quantity.type == .activeEnergyBurned:
                try count(1)
                energyReadings.append(.init(date: quantity.endDate, kilojoules: quantity.quantity.value))
            case .heartbeatSeries(let series):
                try count(series.beats.count)
                beatsByDevice[series.device?.address ?? "", default: []] += series.beats.map { beat in
                    .init(
                        date: series.startDate + beat.timeSinceStart,
                        rrTicks: beat.rrTicks,
                        precededByGap: beat.precededByGap
                    )
                }
            default:
                continue
            }
        }
    }

    private mutating func count(_ more: Int) throws(TooLarge) {
        count += more
        if let limit, count > limit { throw TooLarge(limit: limit) }
    }

    /// The sensor whose readings and beats a recording takes: with several (a strap and earbuds), the one with the
    /// most readings, since two interleaved series would make a heart rate that jumps between them, and RR
    /// intervals that are not successive beats.
    var mainSensor: String? {
        readingsByDevice.max { ($0.value.count, $1.key) < ($1.value.count, $0.key) }?.key
            ?? beatsByDevice.max { $0.value.count < $1.value.count }?.key
    }

    /// The main sensor's readings and beats and the measured energy, each in time order; what was taken is given
    /// up, so only one copy is ever held.
    mutating func take() -> (
        main: String?, readings: [ActivityRecording.Reading], beats: [ActivityRecording.Beat],
        energy: [ActivityRecording.EnergyReading]
    ) {
        let main = mainSensor
        var readings = main.flatMap { readingsByDevice.removeValue(forKey: $0) } ?? []
        var beats = main.flatMap { beatsByDevice.removeValue(forKey: $0) } ?? []
        var energy = energyReadings
        readingsByDevice = [:]
        beatsByDevice = [:]
        energyReadings = []
        readings.sort { $0.date < $1.date }
        beats.sort { $0.date < $1.date }
        energy.sort { $0.date < $1.date }
        return (main, readings, beats, energy)
    }
}
