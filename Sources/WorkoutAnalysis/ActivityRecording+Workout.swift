import Foundation
import WorkoutKit

extension ActivityRecording {
    /// Workout metadata: the energy estimated from heart rate at the end, in kJ (kept apart from measured energy).
    public static let estimatedEnergyKey = "systole.estimatedActiveEnergy"
    /// Workout event metadata: why a marker event covers a time without samples (systoled was not running, or a
    /// team session's athlete sent nothing).
    public static let gapKey = "systole.gap"
    /// Workout event metadata: a marker's text.
    public static let markerTextKey = "systole.marker"

    /// Workout event metadata: the address of a sensor that lost skin contact over the event's interval.
    public static let contactLostKey = "systole.contactLost"

    /// Workout metadata: whether a sensor reports skin contact (its Heart Rate Measurement's contact bits).
    public static func reportsContactKey(_ address: String) -> String { "systole.reportsContact.\(address)" }

    /// Workout metadata: the athlete the workout records (`[athletes]` in systoled.toml).
    public static let athleteKey = "systole.athlete"
    /// Workout metadata: the team session the workout is part of (a UUID, the same on every athlete's workout).
    public static let teamSessionKey = "systole.teamSession"

    /// Workout metadata: a sensor's battery level in percent when the workout ended.
    public static func batteryKey(_ address: String) -> String { "systole.battery.\(address)" }

    /// The recording of a stored workout and its samples (as the store returns them, series unpacked): pauses from
    /// its pause and resume events, laps and markers from its events, the readings and beats of its main sensor,
    /// the energy its sensors measured (or the estimate stored with it), and its sensors with their battery levels.
    public init(workout: Workout, samples: [Sample]) {
        var recording = ActivityRecording(
            id: workout.id,
            activity: workout.activityType,
            start: workout.startDate,
            end: max(workout.startDate, workout.endDate)
        )
        recording.pauses = Self.pauses(workout)
        if case .string(let athlete)? = workout.metadata[Self.athleteKey] { recording.athlete = athlete }
        recording.laps = workout.events.filter { $0.type == .lap }.sorted { $0.startDate < $1.startDate }.map {
            DateInterval(start: $0.startDate, end: max($0.startDate, $0.endDate))
        }
        recording.markers = workout.events.compactMap { event in
            guard event.type == .marker, case .string(let text)? = event.metadata[Self.markerTextKey] else {
                return nil
            }
            return ActivityRecording.Marker(date: event.startDate, text: text)
        }

        // With several sensors (a strap and earbuds), the readings and beats of the one with the most readings: two
        // interleaved series would make a heart rate that jumps between them, and RR intervals that are not
        // successive beats.
        var readingsByDevice: [String: [ActivityRecording.Reading]] = [:]
        var beatsByDevice: [String: [ActivityRecording.Beat]] = [:]
        for sample in samples {
            switch sample {
            case .quantity(let quantity) where quantity.type == .heartRate:
                readingsByDevice[quantity.device?.address ?? "", default: []].append(
                    .init(date: quantity.startDate, bpm: quantity.quantity.value)
                )
            case .quantity(let quantity) where quantity.type == .activeEnergyBurned:
                recording.energyReadings.append(.init(date: quantity.endDate, kilojoules: quantity.quantity.value))
            case .heartbeatSeries(let series):
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
        let main =
            readingsByDevice.max { ($0.value.count, $1.key) < ($1.value.count, $0.key) }?.key
            ?? beatsByDevice.max { $0.value.count < $1.value.count }?.key
        if let main {
            recording.readings = (readingsByDevice[main] ?? []).sorted { $0.date < $1.date }
            recording.beats = (beatsByDevice[main] ?? []).sorted { $0.date < $1.date }
            if case .bool(let reports)? = workout.metadata[Self.reportsContactKey(main)] {
                recording.reportsContact = reports
            }
            recording.contactLost = workout.events.compactMap { event in
                guard case .string(main)? = event.metadata[Self.contactLostKey] else { return nil }
                return DateInterval(start: event.startDate, end: max(event.startDate, event.endDate))
            }.sorted { $0.start < $1.start }
        }
        recording.energyReadings.sort { $0.date < $1.date }

        let measured = workout.statistics(for: .activeEnergyBurned)?.sumQuantity()?.value ?? 0
        if measured > 0 {
            recording.energy = .init(kilojoules: measured, isEstimated: false)
        } else if case .number(let estimated)? = workout.metadata[Self.estimatedEnergyKey], estimated.isFinite {
            recording.energy = .init(kilojoules: estimated, isEstimated: true)
        }
        recording.sensors = workout.devices.map { device in
            var battery: Int?
            if let address = device.address, case .number(let level)? = workout.metadata[Self.batteryKey(address)],
                level.isFinite
            {
                battery = Int(max(0, min(100, level)))
            }
            return ActivityRecording.Sensor(
                fitManufacturer: device.manufacturer.flatMap(ActivityRecording.Sensor.fitManufacturer(forCompany:)),
                name: device.name ?? device.address,
                batteryPercent: battery
            )
        }
        self = recording
    }

    /// Each pause up to its resume (or the workout's end).
    static func pauses(_ workout: Workout) -> [DateInterval] {
        var pauses: [DateInterval] = []
        var pausedAt: Date?
        for event in workout.events.sorted(by: { $0.startDate < $1.startDate }) {
            switch event.type {
            case .pause where pausedAt == nil:
                pausedAt = event.startDate
            case .resume:
                if let start = pausedAt, event.startDate >= start {
                    pauses.append(DateInterval(start: start, end: event.startDate))
                }
                pausedAt = nil
            default:
                continue
            }
        }
        if let start = pausedAt, workout.endDate > start {
            pauses.append(DateInterval(start: start, end: workout.endDate))
        }
        return pauses
    }
}
