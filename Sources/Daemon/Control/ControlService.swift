import BlueZ
import ControlAPI
import DBus
import Foundation
import HeartRateProfile
import Recording
import Replication
import SQLiteStore
import ServiceLifecycle
import Synchronization
import WorkoutAnalysis
import WorkoutKit

/// systoled's D-Bus control API (`org.systole.Daemon1` at `/org/systole/Daemon`, name `org.systole.Daemon`): its
/// properties, announced as they change, and the methods of its parts (``WorkoutControl``, ``BluetoothControl``,
/// ``HistoryControl``, ``ImportControl``, ``TrendsControl``) with the daemon's own (the web page, replication, the profile). Who may call it is decided
/// by the bus policy (systemd/org.systole.Daemon.conf).
final class ControlService: Service, RecordingOutput {
    private let connection: DBusConnection
    private let workouts: WorkoutManager
    private let sensors: SensorManager
    /// The parts that add their methods to the interface.
    private let parts: [any ControlMethods]
    private let object = DBusObject(path: ControlAPI.objectPath)
    private let lastRefresh = LastTime()
    /// Held while a refresh reads and announces.
    private let refreshing = Mutex(())
    /// When ``RecordingPipeline`` last recorded a batch of readings.
    private let lastBatch = LastTime(.now - .seconds(3600))
    private let clock: any WorkoutClock
    private let profile: AthleteProfile
    /// The web page's address with its token (`systole web`); nil when `[http]` is off.
    private let webPage: String?
    /// The replicator, when `[replication]` is on.
    private let replicator: Replicator?

    init(
        connection: DBusConnection,
        client: BlueZClient,
        workouts: WorkoutManager,
        sensors: SensorManager,
        store: SQLiteHealthStore,
        exporter: WorkoutExporter,
        adapter: String?,
        clock: any WorkoutClock,
        profile: AthleteProfile = AthleteProfile(),
        webPage: String? = nil,
        replicator: Replicator? = nil
    ) {
        self.replicator = replicator
        self.profile = profile
        self.webPage = webPage
        self.connection = connection
        self.workouts = workouts
        self.sensors = sensors
        self.clock = clock
        parts = [
            WorkoutControl(workouts: workouts),
            BluetoothControl(client: client, sensors: sensors, adapter: adapter),
            HistoryControl(store: store, exporter: exporter, profile: profile),
            ImportControl(store: store, clock: clock),
            TrendsControl(history: TrainingHistory(store: store, profile: profile), goals: profile.goals),
        ]
    }

    /// Exports the object and takes the well-known name; fails when another systoled has it.
    func publish() async throws(DBusError) {
        object.addInterface(makeInterface(), values: initialProperties())
        // Every reading changes a sensor's bpm and date: the sensors are made when read, and a change of those
        // alone is announced by name (see refresh()).
        object.provideProperty(ControlAPI.interface, "Sensors") { [sensors] in BluetoothControl.sensorsValue(sensors) }
        connection.export(object)
        let reply = try await connection.requestName(ControlAPI.busName, flags: [.doNotQueue])
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            throw DBusError(
                name: "org.freedesktop.DBus.Error.AddressInUse",
                message: "\(ControlAPI.busName) is already owned: another systoled is running on this bus"
            )
        }
    }

    static let sensorRefreshInterval: Duration = .seconds(1)
    /// How often the timer looks while readings drive the announcements: it only has to notice that they stopped.
    static let drivenRefreshCheck: Duration = .seconds(5)

    func run() async throws {
        // Properties follow the workout and the sensors; while a workout is ongoing the elapsed time and the heart
        // rate's age move too, and are announced once a second.
        let workoutChanges = workouts.changes.subscribe(buffering: 1)
        let sensorChanges = sensors.statusChanged.subscribe(buffering: 1)
        let workoutActivity = workouts.changes.subscribe(buffering: 1)
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await _ in workoutChanges { self.refresh() } }
                group.addTask {
                    // A sensor's status (beyond its readings) is announced at most once a second (the first
                    // change after a quiet second at once); changes in between are folded into the next. Each
                    // announcement carries every sensor: a hundred sensors connecting at once make one a second.
                    for await _ in sensorChanges {
                        self.refresh()
                        try? await Task.sleep(for: Self.sensorRefreshInterval)
                    }
                }
                group.addTask {
                    // A workout with nothing arriving (a paused one, a strap out of range) still ages: a check on
                    // the bus's loop thread covers it, once a second while the batches do not announce, and only
                    // while a workout is ongoing. Checked once at first (a workout recovered at start may have been
                    // announced before this subscribed), then at each change.
                    await self.workouts.whileOngoing(following: workoutActivity) {
                        let timer = self.connection.runOnLoop(at: .now + .seconds(1)) { [weak self] in
                            self?.refreshWhileQuiet()
                        }
                        return { timer.cancel() }
                    }
                }
            }
        }
        try? await connection.releaseName(ControlAPI.busName)
        connection.unexport(path: ControlAPI.objectPath)
    }

    /// On the loop thread, while a workout is ongoing: announces what aged when nothing else announced for a
    /// second. Returns when to look again: soon while idle between announcements, rarely while batches announce
    /// (the check only has to notice that they stopped, so the announcements can pause for up to that long).
    private func refreshWhileQuiet() -> ContinuousClock.Instant {
        if lastRefresh.age >= .milliseconds(900) { refresh() }
        let driven = lastBatch.age < .seconds(2)
        return .now + (driven ? Self.drivenRefreshCheck : .seconds(1))
    }

    /// A batch of readings was recorded (the output stage of ``RecordingPipeline``, on the workout thread right after
    /// its commit): while readings arrive, they drive the once-a-second announcement, with no thread of its own woken
    /// and no timer.
    func didRecord(_ batch: [RecordedReading]) {
        lastBatch.set(.now)
        if lastRefresh.age >= .milliseconds(900) { refresh() }
    }

    // MARK: Properties

    private func initialProperties() -> [String: DBusValue] {
        [
            "State": .string("idle"),
            "ElapsedTime": .double(0),
            "HeartRate": .propertyMap([:]),
            "Sensors": .array(.propertyMap, []),
            "CurrentWorkout": .propertyMap([:]),
            "Workouts": .array(.propertyMap, []),
        ]
    }

    /// Announces what changed. `Sensors` goes with its value only when a sensor's status changed beyond its
    /// readings; when only readings changed (every sensor's bpm and date, with a hundred sensors most of a
    /// signal), it is named among the invalidated properties and whoever wants it reads it.
    private func refresh() {
        // One at a time: it runs on the workout thread, the pool and the loop thread, and each reads what it
        // announces before the object keeps it; without the lock an older call's values could be kept and sent
        // after a newer one's. Nothing inside waits (emitting only queues the signal).
        refreshing.withLock { _ in refreshNow() }
    }

    private func refreshNow() {
        lastRefresh.set(.now)
        let all = workouts.currentSnapshots
        let snapshot = all.first ?? .idle
        let latest = workouts.currentLatestReading
        let sensorChanges = sensors.takeChanges()
        var changes: [String: DBusValue?] = [
            "State": .string(snapshot.stateName),
            "ElapsedTime": .double((snapshot.elapsed * 10).rounded() / 10),
            "HeartRate": .propertyMap(heartRate(latest)),
            "CurrentWorkout": .propertyMap(Self.values(of: snapshot)),
            "Workouts": .array(.propertyMap, all.map { .propertyMap(Self.values(of: $0)) }),
        ]
        if sensorChanges.contains(.status) { changes["Sensors"] = BluetoothControl.sensorsValue(sensors) }
        object.setProperties(
            ControlAPI.interface,
            changes,
            invalidating: sensorChanges == .readings ? ["Sensors"] : []
        )
    }

    private func heartRate(_ latest: DaemonReading?) -> [String: DBusValue] {
        guard let latest, let bpm = latest.reading.measurement.usableHeartRate else { return [:] }
        return [
            "bpm": .uint32(UInt32(bpm)),
            "age": .double((clock.now().timeIntervalSince(latest.reading.receivedDate) * 10).rounded() / 10),
            "sensor": .string(latest.reading.sensor.description),
        ]
    }

    static func values(of snapshot: WorkoutSnapshot) -> [String: DBusValue] {
        guard let id = snapshot.workoutID else { return [:] }
        var values: [String: DBusValue] = [
            "id": .string(id.uuidString),
            "state": .string("\(snapshot.state)"),
            "elapsed": .double(snapshot.elapsed),
        ]
        values["activity"] = snapshot.activity.map { .string($0.name) }
        values["location"] = snapshot.location.map { .string("\($0)") }
        values["start"] = snapshot.startDate.map { .double($0.timeIntervalSince1970) }
        if let statistics = snapshot.heartRate {
            values["heartRate"] = .propertyMap(WorkoutValues.values(of: statistics))
        }
        values["storeError"] = snapshot.storeError.map(DBusValue.string)
        values["athlete"] = snapshot.athlete.map(DBusValue.string)
        values["teamSession"] = snapshot.teamSessionID.map { .string($0.uuidString) }
        return values
    }

    static func values(of replicator: Replicator) -> [String: DBusValue] {
        let status = replicator.status
        var values: [String: DBusValue] = [
            "receiver": .string(replicator.settings.receiver),
            "address": .string(replicator.settings.displayAddress),
            "connected": .boolean(status.connected),
            "caughtUp": .boolean(status.caughtUp),
            "waitingChanges": .uint32(UInt32(clamping: status.waitingChanges)),
            "waitingSamples": .uint32(UInt32(clamping: status.waitingSamples)),
            "droppedSamples": .uint32(UInt32(clamping: status.droppedSamples)),
            "sentChanges": .uint32(UInt32(clamping: status.sentChanges)),
            "sentSamples": .uint32(UInt32(clamping: status.sentSamples)),
        ]
        values["problem"] = status.problem.map(DBusValue.string)
        values["oldestWaiting"] = status.oldestWaiting.map { .double($0.timeIntervalSince1970) }
        values["storeCopied"] = status.storeCopied.map { .double($0.timeIntervalSince1970) }
        return values
    }

    // MARK: Methods

    private func makeInterface() -> DBusInterface {
        let map = DBusType.propertyMap
        var methods: [DBusMethod] = []
        for part in parts { part.addMethods(to: &methods) }
        methods += [
            DBusMethod("GetWebPage", outputs: [("address", .string)]) { _ throws(DBusError) in
                guard let webPage = self.webPage else {
                    throw DBusError(
                        name: ControlAPI.ErrorName.notFound,
                        message: "the web page is off: add an [http] table with listen = \"127.0.0.1:8730\" to "
                            + "systoled.toml and restart systoled"
                    )
                }
                return [.string(webPage)]
            },
            DBusMethod("GetReplication", outputs: [("replication", map)]) { _ throws(DBusError) in
                guard let replicator = self.replicator else {
                    throw DBusError(
                        name: ControlAPI.ErrorName.notFound,
                        message: "replication is off: add a [replication] table with postgres = "
                            + "\"postgresql://systole@db.example.org/systole\" to systoled.toml and restart systoled"
                    )
                }
                return [.propertyMap(Self.values(of: replicator))]
            },
            DBusMethod("GetProfile", outputs: [("profile", map)]) { _ in
                [.propertyMap(AnalysisValues.values(of: self.profile))]
            },
        ]
        return DBusInterface(
            ControlAPI.interface,
            methods: methods,
            properties: [
                DBusProperty("State", .string),
                DBusProperty("ElapsedTime", .double),
                DBusProperty("HeartRate", map),
                DBusProperty("Sensors", .array(map)),
                DBusProperty("CurrentWorkout", map),
                DBusProperty("Workouts", .array(map)),
            ]
        )
    }

}
