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
        var collector = SampleCollector(limit: nil)
        // Without a limit nothing is refused.
        try? collector.add(samples)
        self.init(workout: workout, collected: collector)
    }

    /// The recording of a stored workout from its samples gathered a chunk at a time (``SampleCollector``).
    public init(workout: Workout, collected collector: consuming SampleCollector) {
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
        let (main, readings, beats, energy) = collector.take()
        recording.energyReadings = energy
        if let main {
            recording.readings = readings
            recording.beats = beats
            if case .bool(let reports)? = workout.metadata[Self.reportsContactKey(main)] {
                recording.reportsContact = reports
            }
            recording.contactLost = workout.events.compactMap { event in
                guard case .string(main)? = event.metadata[Self.contactLostKey] else { return nil }
                return DateInterval(start: event.startDate, end: max(event.startDate, event.endDate))
            }.sorted { $0.start < $1.start }
        }

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
