import BlueZ
import ControlAPI
import Foundation
import LiveFeed
import LiveWeb
import PolarMeasurementData
import Recording
import SQLiteStore
import ServiceLifecycle
import SystoledConfiguration
import WorkoutAnalysis
import WorkoutKit

/// What systoled's live outputs show (the web page and overlay, MQTT, /metrics), built from the workout manager's
/// snapshot, the sensors' statuses and the store, with the privacy setting applied here, once, for all of them.
/// As a service it tells the ``LiveFeed`` of the workout's and the sensors' changes; the recording pipeline's output
/// stage tells it of each recorded batch.
final class DaemonLiveSource: LiveWebSource, Service, RecordingOutput {
    let feed = LiveFeed()
    /// The sensors' last seconds of ECG, for the page's strip.
    private let ecg = LiveECG()
    let daemonMetrics: DaemonMetrics
    private let workouts: WorkoutManager
    private let sensors: SensorManager
    private let store: SQLiteHealthStore
    private let exporter: WorkoutExporter
    private let profile: AthleteProfile
    private let privacy: DaemonConfiguration.Privacy
    private let clock: any WorkoutClock
    /// The zones' lower bounds, for the colour of the moment's heart rate.
    private let zoneLowerBounds: [Double]

    /// The most points of the live chart's history: a four-hour workout at 1 Hz is 14 400 readings, averaged
    /// into this many.
    static let historyPoints = 1200

    init(
        workouts: WorkoutManager,
        sensors: SensorManager,
        store: SQLiteHealthStore,
        exporter: WorkoutExporter,
        profile: AthleteProfile,
        privacy: DaemonConfiguration.Privacy,
        clock: any WorkoutClock,
        metrics: DaemonMetrics
    ) {
        self.workouts = workouts
        self.sensors = sensors
        self.store = store
        self.exporter = exporter
        self.profile = profile
        self.privacy = privacy
        self.clock = clock
        daemonMetrics = metrics
        zoneLowerBounds = HeartRateZones(profile: profile).zones.map(\.lower)
    }

    var showsHeartRate: Bool { privacy == .full }

    /// The live ECG, unless the privacy setting hides health values.
    var liveECG: LiveECG? { showsHeartRate ? ecg : nil }

    func didRecordWaveforms(_ waveforms: [DaemonWaveform]) {
        guard showsHeartRate else { return }
        ecg.add(
            waveforms.compactMap { waveform in
                guard case .ecg(let values) = waveform.reading.samples else { return nil }
                return (
                    waveform.reading.sensor.description, waveform.reading.firstSampleDate.timeIntervalSince1970,
                    waveform.reading.rate, values, waveform.reading.segmentBreak != nil
                )
            }
        )
    }

    func run() async throws {
        let workoutChanges = workouts.changes.subscribe(buffering: 1)
        let sensorChanges = sensors.statusChanged.subscribe(buffering: 1)
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await _ in workoutChanges { self.feed.changed() } }
                group.addTask { for await _ in sensorChanges { self.feed.changed() } }
            }
        }
    }

    /// The zone of `bpm`: 1–5, 0 below zone 1.
    func zone(of bpm: Int) -> Int {
        zoneLowerBounds.lastIndex { Double(bpm) >= $0 }.map { $0 + 1 } ?? 0
    }

    func status() -> LiveStatus {
        let snapshot = workouts.currentSnapshot
        let latest = workouts.currentLatestReading
        let heartRate = latest.flatMap { reading in
            reading.reading.measurement.usableHeartRate.map(Int.init).map { bpm in
                LiveHeartRate(bpm: bpm, sensor: reading.reading.sensor.description, zone: zone(of: bpm))
            }
        }
        let statistics = snapshot.heartRate
        let status = LiveStatus(
            state: snapshot.stateName,
            workoutID: snapshot.workoutID?.uuidString,
            activity: snapshot.activity?.name,
            start: snapshot.startDate?.timeIntervalSince1970,
            elapsed: snapshot.elapsed,
            at: clock.now().timeIntervalSince1970,
            heartRate: heartRate,
            average: finite(statistics?.averageQuantity()?.value),
            maximum: finite(statistics?.maximumQuantity()?.value),
            sensors: sensors.sensors.map(Self.liveSensor)
        )
        return showsHeartRate ? status : status.withoutHeartRate()
    }

    static func liveSensor(_ status: SensorStatus) -> LiveSensor {
        LiveSensor(
            address: status.address,
            name: status.name,
            manufacturer: status.manufacturer,
            state: status.state,
            connected: status.isConnected,
            battery: status.batteryPercent,
            contact: status.contact,
            bpm: status.lastHeartRate
        )
    }

    func history() async throws -> [ChartPoint] {
        guard showsHeartRate, let id = workouts.currentSnapshot.workoutID else { return [] }
        let readings = try await store.samples(ofWorkout: id).compactMap { sample -> ChartPoint? in
            guard case .quantity(let quantity) = sample, quantity.type == .heartRate else { return nil }
            return ChartPoint(t: quantity.startDate.timeIntervalSince1970, bpm: quantity.quantity.value)
        }
        return Self.averaged(readings.sorted { $0.t < $1.t }, into: Self.historyPoints)
    }

    /// `points` averaged in runs of equal length so that at most `count` remain.
    static func averaged(_ points: [ChartPoint], into count: Int) -> [ChartPoint] {
        guard points.count > count, count > 0 else { return points }
        let run = (points.count + count - 1) / count
        return stride(from: 0, to: points.count, by: run).map { start in
            let slice = points[start..<min(start + run, points.count)]
            return ChartPoint(
                t: slice.reduce(0) { $0 + $1.t } / Double(slice.count),
                bpm: slice.reduce(0) { $0 + $1.bpm } / Double(slice.count)
            )
        }
    }

    func workouts() async throws -> [WorkoutSummary] {
        try await store.workouts().sorted { $0.startDate > $1.startDate }.map(summary)
    }

    private func summary(_ workout: Workout) -> WorkoutSummary {
        let heartRate = workout.statistics[QuantityType.heartRate.identifier]
        return WorkoutSummary(
            id: workout.id.uuidString,
            activity: workout.activityType.name,
            start: workout.startDate.timeIntervalSince1970,
            end: workout.endDate.timeIntervalSince1970,
            duration: workout.duration,
            averageHeartRate: showsHeartRate ? finite(heartRate?.averageQuantity()?.value) : nil,
            maximumHeartRate: showsHeartRate ? finite(heartRate?.maximumQuantity()?.value) : nil
        )
    }

    private func finishedWorkout(_ id: String) async throws -> Workout? {
        guard let uuid = UUID(uuidString: id) else { return nil }
        return try await store.workouts(idPrefix: uuid.uuidString).first { $0.id == uuid }
    }

    func workout(id: String) async throws -> WorkoutDetail? {
        guard let workout = try await finishedWorkout(id) else { return nil }
        guard showsHeartRate else { return WorkoutDetail(summary: summary(workout)) }
        let recording: ActivityRecording
        do {
            recording = try await ActivityRecording.read(workout, from: store)
        } catch let refusal as SampleCollector.TooLarge {
            throw WorkoutRefusal("\(refusal)", retry: false)
        }
        let zones = HeartRateZones(recording, profile: profile)
        let hrv = HeartRateVariability.workout(recording)
        let energy = recording.energy
        // The ECG's files are offered only for a workout that has ECG.
        let hasECG = try await store.hasWaveforms(.electrocardiogram, ofWorkout: workout.id)
        return WorkoutDetail(
            summary: summary(workout),
            heartRatePerMinute: try await WorkoutChart.heartRatePerMinute(of: workout, in: store).map(finite),
            zones: zones.zones.map { .init(number: $0.number, lower: $0.lower, upper: $0.upper, seconds: $0.seconds) },
            secondsBelowZones: finite(zones.secondsBelow),
            hrv: hrv.flatMap { hrv in
                [hrv.rmssd, hrv.sdnn, hrv.meanNN, hrv.pnn50].allSatisfy(\.isFinite) ? hrv : nil
            }.map {
                .init(
                    rmssd: $0.rmssd,
                    sdnn: $0.sdnn,
                    meanNN: $0.meanNN,
                    pnn50: $0.pnn50,
                    beats: $0.beatCount,
                    corrected: $0.correctedBeats
                )
            },
            trimp: finite(TrainingLoad.trimp(recording, profile: profile)),
            energyKilojoules: finite(energy?.kilojoules ?? EnergyEstimate.kilojoules(recording, profile: profile)),
            energyEstimated: energy.map(\.isEstimated) ?? true,
            exports: ExportFormat.allCases.filter { !$0.needsECG || hasECG }.map(\.rawValue)
        )
    }

    func export(id: String, format: String) async throws -> ExportedFile? {
        guard showsHeartRate, let format = ExportFormat(rawValue: format),
            let workout = try await finishedWorkout(id)
        else { return nil }
        do {
            let (name, chunks) = try await exporter.stream(workout, as: format)
            return ExportedFile(name: name, contentType: format.contentType, chunks: chunks)
        } catch let refusal as WorkoutExporter.Refusal {
            if case .busy = refusal { throw WorkoutRefusal("\(refusal)", retry: true) }
            throw WorkoutRefusal("\(refusal)", retry: false)
        }
    }

    /// `value` when it is a number JSON can carry: a NaN or an infinity (an analysis of too few beats, say) would
    /// make the whole answer fail to encode.
    private func finite(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        return value
    }

    func metrics() -> [UInt8] {
        daemonMetrics.exposition(
            snapshot: workouts.currentSnapshot,
            sensors: sensors.sensors,
            showsHeartRate: showsHeartRate
        )
    }
}

extension DaemonLiveSource {
    /// A batch was recorded: the live feed wakes the web page's event streams and the MQTT publisher, which build
    /// what they show on their own tasks.
    func didRecord(_ batch: [RecordedReading]) { feed.changed() }
}
