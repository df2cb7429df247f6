import BlueZ
import ControlAPI
import DBus
import Foundation
import HealthStore
import HeartRateProfile
import Recording
import Replication
import SafeText
import ServiceLifecycle
import Synchronization
import WorkoutAnalysis
import WorkoutKit
import WorkoutReports

/// systoled's D-Bus control API (`org.systole.Daemon1` at `/org/systole/Daemon`, name `org.systole.Daemon`):
/// the workout commands a HealthKit app offers as intents, sensor management, and the store's workouts and
/// statistics. Who may call it is decided by the bus policy (systemd/org.systole.Daemon.conf).
final class ControlService: Service, RecordingOutput {
    private let connection: DBusConnection
    private let client: BlueZClient
    private let workouts: WorkoutManager
    private let sensors: SensorManager
    private let store: SQLiteHealthStore
    private let exporter: WorkoutExporter
    private let adapter: String?
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
        self.client = client
        self.workouts = workouts
        self.sensors = sensors
        self.store = store
        self.exporter = exporter
        self.adapter = adapter
        self.clock = clock
    }

    /// Exports the object and takes the well-known name; fails when another systoled has it.
    func publish() async throws(DBusError) {
        object.addInterface(makeInterface(), values: initialProperties())
        // Every reading changes a sensor's bpm and date: the sensors are made when read, and a change of those
        // alone is announced by name (see refresh()).
        object.provideProperty(ControlAPI.interface, "Sensors") { [sensors] in Self.sensorsValue(sensors) }
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
        if sensorChanges.contains(.status) { changes["Sensors"] = Self.sensorsValue(sensors) }
        object.setProperties(
            ControlAPI.interface,
            changes,
            invalidating: sensorChanges == .readings ? ["Sensors"] : []
        )
    }

    /// The `Sensors` property: every configured sensor's status.
    private static func sensorsValue(_ sensors: SensorManager) -> DBusValue {
        .array(.propertyMap, sensors.sensors.map { .propertyMap(values(of: $0)) })
    }

    private func heartRate(_ latest: DaemonReading?) -> [String: DBusValue] {
        guard let latest, let bpm = latest.reading.measurement.usableHeartRate else { return [:] }
        return [
            "bpm": .uint32(UInt32(bpm)),
            "age": .double((clock.now().timeIntervalSince(latest.reading.receivedDate) * 10).rounded() / 10),
            "sensor": .string(latest.reading.sensor.description),
        ]
    }

    static func values(of status: SensorStatus) -> [String: DBusValue] {
        var values: [String: DBusValue] = [
            "state": .string(status.state),
            "connected": .boolean(status.isConnected),
        ]
        values["address"] = status.address.map(DBusValue.string)
        values["name"] = status.name.map(DBusValue.string)
        values["athlete"] = status.athlete.map(DBusValue.string)
        values["manufacturer"] = status.manufacturer.map(DBusValue.string)
        values["battery"] = status.batteryPercent.map { .byte(UInt8(clamping: $0)) }
        values["location"] = status.bodyLocation.map(DBusValue.string)
        values["contact"] = status.contact.map(DBusValue.string)
        values["bpm"] = status.lastHeartRate.map { .uint32(UInt32(clamping: $0)) }
        values["lastReading"] = status.lastReadingDate.map { .double($0.timeIntervalSince1970) }
        values["malformed"] = .uint32(UInt32(clamping: status.rejected.malformed))
        values["outOfRange"] = .uint32(UInt32(clamping: status.rejected.outOfRange))
        values["excessBeats"] = .uint32(UInt32(clamping: status.rejected.excessBeats))
        values["throttled"] = .uint32(UInt32(clamping: status.rejected.throttled))
        values["notify"] = status.notify.map(DBusValue.string)
        values["notifyFallback"] = status.notifyFallback.map(DBusValue.string)
        return values
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
        return DBusInterface(
            ControlAPI.interface,
            methods: [
                DBusMethod(
                    "StartWorkout",
                    inputs: [("activity", .string), ("location", .string)],
                    outputs: [("workout", .string), ("heartRateAvailable", .boolean)]
                ) { call throws(DBusError) in try await self.startWorkout(call) },
                DBusMethod(
                    "StartTeamSession",
                    inputs: [("activity", .string), ("location", .string), ("teamSession", .string)],
                    outputs: [("teamSession", .string), ("workouts", .array(map))]
                ) { call throws(DBusError) in try await self.startTeamSession(call) },
                DBusMethod("PauseWorkout") { _ throws(DBusError) in
                    try await Self.command { () throws(WorkoutCommandError) in try await self.workouts.pause() }
                    return []
                },
                DBusMethod("ResumeWorkout") { _ throws(DBusError) in
                    try await Self.command { () throws(WorkoutCommandError) in try await self.workouts.resume() }
                    return []
                },
                DBusMethod("EndWorkout", outputs: [("workout", map)]) { _ throws(DBusError) in
                    let saved = try await Self.command { () throws(WorkoutCommandError) in
                        try await self.workouts.end()
                    }
                    // The first workout, as for a workout of one's own; a team session's every workout under "team".
                    var values = saved.first.map(WorkoutValues.values(of:)) ?? [:]
                    if saved.count > 1 || saved.first?.metadata[ActivityRecording.teamSessionKey] != nil {
                        values["team"] = .array(map, saved.map { .propertyMap(WorkoutValues.values(of: $0)) })
                    }
                    return [.propertyMap(values)]
                },
                DBusMethod("CancelWorkout") { _ throws(DBusError) in
                    try await Self.command { () throws(WorkoutCommandError) in try await self.workouts.cancel() }
                    return []
                },
                DBusMethod(
                    "AddSample",
                    inputs: [("type", .string), ("value", .double), ("unit", .string)]
                ) { call throws(DBusError) in try await self.addSample(call) },
                DBusMethod("AddLap", outputs: [("lap", .uint32)]) { _ throws(DBusError) in
                    let lap = try await Self.command { () throws(WorkoutCommandError) in try await self.workouts.lap() }
                    return [.uint32(UInt32(clamping: lap))]
                },
                DBusMethod("AddMarker", inputs: [("text", .string)]) { call throws(DBusError) in
                    let text = try Self.text(call, 0, "a marker's text")
                    try await Self.command { () throws(WorkoutCommandError) in try await self.workouts.marker(text) }
                    return []
                },
                DBusMethod("ListSensors", outputs: [("sensors", .array(map))]) { _ in
                    [Self.sensorsValue(self.sensors)]
                },
                DBusMethod("Scan", inputs: [("seconds", .double)], outputs: [("devices", .array(map))]) {
                    call throws(DBusError) in try await self.scan(call)
                },
                DBusMethod("Pair", inputs: [("address", .string)]) { call throws(DBusError) in
                    try await self.pair(call)
                },
                DBusMethod("Forget", inputs: [("address", .string)]) { call throws(DBusError) in
                    try await self.forget(call)
                },
                DBusMethod("ListWorkouts", outputs: [("workouts", .array(map))]) { _ throws(DBusError) in
                    let all = try await Self.storeCall { try await self.store.workouts() }
                    return [.array(map, all.map { .propertyMap(WorkoutValues.values(of: $0)) })]
                },
                DBusMethod("GetWorkout", inputs: [("id", .string)], outputs: [("workout", map)]) {
                    call throws(DBusError) in try await self.getWorkout(call)
                },
                DBusMethod(
                    "ExportWorkout",
                    inputs: [("id", .string), ("format", .string), ("file", .unixFD)],
                    outputs: [("fileName", .string), ("size", .uint64)]
                ) { call throws(DBusError) in try await self.exportWorkout(call) },
                DBusMethod("DeleteWorkout", inputs: [("id", .string)]) { call throws(DBusError) in
                    let workout = try await self.workout(matching: try Self.text(call, 0, "a workout id"))
                    _ = try await Self.storeCall { try await self.store.deleteWorkout(workout.id) }
                    return []
                },
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
                DBusMethod(
                    "Statistics",
                    inputs: [("type", .string), ("interval", .string), ("from", .double), ("to", .double)],
                    outputs: [("buckets", .array(map))]
                ) { call throws(DBusError) in try await self.statistics(call) },
            ],
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

    /// Runs a workout command, turning its refusal into the matching D-Bus error.
    private static func command<T>(
        _ body: () async throws(WorkoutCommandError) -> T
    ) async throws(DBusError) -> T {
        do {
            return try await body()
        } catch {
            throw DBusError(name: error.kind.errorName, message: error.message)
        }
    }

    private static func storeCall<T>(_ body: () async throws -> T) async throws(DBusError) -> T {
        do {
            return try await body()
        } catch {
            throw DBusError(name: ControlAPI.ErrorName.store, message: "\(error)")
        }
    }

    /// The refusal of a name the caller gave that is none of `known`.
    private static func unknown(_ what: String, _ given: String, known: [String]) -> DBusError {
        DBusError(
            name: ControlAPI.ErrorName.invalidArguments,
            message: "unknown \(what) \(given.quotedExcerpt()); known: \(known.joined(separator: ", "))"
        )
    }

    private static func text(_ call: DBusMethodCall, _ index: Int, _ expected: String) throws(DBusError) -> String {
        guard let text = try call.argument(index, expected).string else {
            throw DBusError(.invalidArgs, "\(call.member) expects \(expected) as argument \(index + 1)")
        }
        return text
    }

    /// The activity and location of a start call's first two arguments.
    private static func configuration(_ call: DBusMethodCall) throws(WorkoutCommandError) -> WorkoutConfiguration {
        guard let activityName = try? call.argument(0, "an activity").string,
            let locationName = try? call.argument(1, "a location").string
        else {
            throw WorkoutCommandError(.invalidArguments, "\(call.member) expects an activity and a location")
        }
        guard let activity = WorkoutActivityType(name: activityName) else {
            throw WorkoutCommandError(
                .invalidArguments,
                "unknown activity \(activityName.quotedExcerpt()); known: "
                    + WorkoutActivityType.allCases.map(\.name).joined(separator: ", ")
            )
        }
        guard let location = WorkoutSessionLocationType.allCases.first(where: { "\($0)" == locationName }) else {
            throw WorkoutCommandError(
                .invalidArguments,
                "unknown location \(locationName.quotedExcerpt()); known: indoor, outdoor, unknown"
            )
        }
        return WorkoutConfiguration(activityType: activity, locationType: location)
    }

    private func startWorkout(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let (id, available) = try await Self.command { () throws(WorkoutCommandError) in
            try await self.workouts.start(try Self.configuration(call))
        }
        return [.string(id.uuidString), .boolean(available)]
    }

    /// `StartTeamSession`: a workout per athlete whose sensor is connected, under the team session given (a UUID,
    /// so receivers in other rooms can join it) or a new one (an empty string).
    private func startTeamSession(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let text = try Self.text(call, 2, "a team session id or an empty string")
        var team: UUID?
        if !text.isEmpty {
            guard let id = UUID(uuidString: text) else {
                throw DBusError(
                    name: ControlAPI.ErrorName.invalidArguments,
                    message: "\(text.quotedExcerpt()) is not a team session id (a UUID, as 'systole start --team' "
                        + "printed it)"
                )
            }
            team = id
        }
        let started = try await Self.command { () throws(WorkoutCommandError) in
            try await self.workouts.startTeam(try Self.configuration(call), teamSessionID: team)
        }
        return [
            .string(started.teamSessionID.uuidString),
            .array(
                .propertyMap,
                started.workouts.map {
                    .propertyMap(["athlete": .string($0.athlete), "id": .string($0.id.uuidString)])
                }
            ),
        ]
    }

    private func addSample(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let typeName = try Self.text(call, 0, "a sample type")
        guard let value = try call.argument(1, "a value").double else {
            throw DBusError(.invalidArgs, "AddSample expects a double as argument 2")
        }
        let unitName = try Self.text(call, 2, "a unit")
        guard let type = QuantityType(identifier: typeName) else {
            throw Self.unknown("sample type", typeName, known: QuantityType.known.map(\.identifier))
        }
        guard let unit = Unit(symbol: unitName) else {
            throw Self.unknown("unit", unitName, known: Unit.known.map(\.symbol))
        }
        let quantity = Quantity(value, unit)
        guard quantity.isCompatible(with: type.canonicalUnit) else {
            throw DBusError(
                name: ControlAPI.ErrorName.invalidArguments,
                message: "\(typeName) is not measured in \(unitName): use "
                    + Unit.known.filter { type.canonicalUnit.dimension == $0.dimension }.map(\.symbol).joined(
                        separator: " or "
                    )
            )
        }
        try await Self.command { () throws(WorkoutCommandError) in
            try await self.workouts.addSample(type: type, quantity: quantity)
        }
        return []
    }

    private func bluetooth<T>(_ body: () async throws -> T) async throws(DBusError) -> T {
        do {
            return try await body()
        } catch let error as BlueZError {
            throw DBusError(name: ControlAPI.ErrorName.bluetooth, message: error.description)
        } catch {
            throw DBusError(name: ControlAPI.ErrorName.bluetooth, message: "\(error)")
        }
    }

    private func scan(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let seconds = try call.argument(0, "seconds").double ?? 5
        guard seconds > 0, seconds <= 60 else {
            throw DBusError(name: ControlAPI.ErrorName.invalidArguments, message: "scan for 0 to 60 seconds")
        }
        let devices = try await bluetooth { () async throws -> [(BluetoothDevice, Adapter)] in
            let adapters = try client.poweredAdapters(named: adapter)
            // A sensor still searching may have discovery running already on this connection; then it is
            // shared, and left running for the sensor.
            var started: [Adapter] = []
            var refusal: (any Error)?
            for adapter in adapters {
                do {
                    try await adapter.setDiscoveryFilter(uuids: [.heartRateService])
                    try await adapter.startDiscovery()
                    started.append(adapter)
                } catch let error as BlueZError where error.kind == .inProgress {
                    continue
                } catch {
                    refusal = refusal ?? error
                }
            }
            if started.isEmpty, adapters.allSatisfy({ !$0.isDiscovering }), let refusal { throw refusal }
            try? await Task.sleep(for: .seconds(seconds))
            // Read before stopping: bluetoothd drops a device's RSSI when discovery stops.
            let found = adapters.flatMap { adapter in
                adapter.devices.filter { $0.uuids.contains(.heartRateService) }.map { ($0, adapter) }
            }
            for adapter in started { try? await adapter.stopDiscovery() }
            return found
        }
        let map = DBusType.propertyMap
        return [
            .array(
                map,
                devices.map { device, adapter in
                    var values: [String: DBusValue] = [
                        "paired": .boolean(device.isPaired),
                        "connected": .boolean(device.isConnected),
                        "adapter": .string(adapter.name),
                    ]
                    values["address"] = device.address.map { .string($0.description) }
                    values["name"] = device.alias.map(DBusValue.string)
                    values["manufacturer"] = device.manufacturerName.map(DBusValue.string)
                    values["rssi"] = device.rssi.map { .int16($0) }
                    return .propertyMap(values)
                }
            )
        ]
    }

    private func device(_ call: DBusMethodCall) throws(DBusError) -> BluetoothDevice {
        let text = try Self.text(call, 0, "an address")
        guard let address = try? BluetoothAddress(text) else {
            throw DBusError(
                name: ControlAPI.ErrorName.invalidArguments,
                message: "\(text.quotedExcerpt()) is not a Bluetooth address (like A0:9E:1A:12:34:56)"
            )
        }
        guard let device = client.devices.first(where: { $0.address == address }) else {
            throw DBusError(
                name: ControlAPI.ErrorName.notFound,
                message: "bluetoothd does not know \(address): wake the sensor and run 'systole scan' first"
            )
        }
        // Only sensors: pairing or forgetting a headset or keyboard is not systoled's to do.
        guard device.isHeartRateSensor || sensors.isConfigured(address) else {
            throw DBusError(
                name: ControlAPI.ErrorName.invalidArguments,
                message:
                    "\(address) (\(device.alias?.quotedExcerpt() ?? "unnamed")) is not a heart-rate sensor: it offers no Heart "
                    + "Rate service (0x180D) and is not in systoled's sensors; systole pairs and forgets sensors only "
                    + "(use bluetoothctl or your desktop's Bluetooth settings for other devices, or add its address "
                    + "to sensors in systoled.toml if it is a sensor)"
            )
        }
        return device
    }

    private func pair(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let device = try device(call)
        try await bluetooth {
            if !device.isPaired {
                do {
                    try await sensors.pair(device)
                } catch {
                    // The sensor manager may be pairing the same sensor (earbuds ask for it): wait for that.
                    guard let refusal = error as? BlueZError,
                        refusal.kind == .inProgress || refusal.kind == .alreadyExists
                    else { throw error }
                    for _ in 0..<200 where !device.isPaired { try await Task.sleep(for: .milliseconds(100)) }
                    guard device.isPaired else { throw error }
                }
            }
            try await device.setTrusted(true)
        }
        return []
    }

    private func forget(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let device = try device(call)
        try await bluetooth { try await device.remove() }
        return []
    }

    /// The finished workout whose id starts with `text`; NotFound when none does, InvalidArguments when several.
    private func workout(matching text: String) async throws(DBusError) -> Workout {
        guard !text.isEmpty else {
            throw DBusError(
                name: ControlAPI.ErrorName.invalidArguments,
                message: "give a workout id (its first characters are enough); list them with 'systole workouts'"
            )
        }
        let matching = try await Self.storeCall { try await self.store.workouts(idPrefix: text) }.filter {
            $0.id.uuidString.lowercased().hasPrefix(text.lowercased())
        }
        guard let workout = matching.first else {
            throw DBusError(
                name: ControlAPI.ErrorName.notFound,
                message: "no workout \(text.quotedExcerpt()); list them with 'systole workouts'"
            )
        }
        guard matching.count == 1 else {
            throw DBusError(
                name: ControlAPI.ErrorName.invalidArguments,
                message: "\(matching.count) workouts start with \(text.quotedExcerpt()); give more of the id"
            )
        }
        return workout
    }

    /// The recording exports and analysis read, from the store (a chunk at a time, within
    /// ``SampleCollector/defaultLimit``).
    private func recording(of workout: Workout) async throws(DBusError) -> ActivityRecording {
        do {
            return try await ActivityRecording.read(workout, from: store)
        } catch let refusal as SampleCollector.TooLarge {
            throw DBusError(name: ControlAPI.ErrorName.invalidArguments, message: "\(refusal)")
        } catch {
            throw DBusError(name: ControlAPI.ErrorName.store, message: "\(error)")
        }
    }

    /// Writes the file into the descriptor the caller passed (the write end of its pipe), and answers once it is
    /// all written, with the file's name and size: the caller checks it read as many bytes.
    private func exportWorkout(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        guard call.arguments.count == 3, case .unixFD(let fd) = call.arguments[2] else {
            for fd in call.arguments.flatMap(\.unixFDs) { close(fd) }
            throw DBusError(.invalidArgs, "ExportWorkout expects a workout id, a format and a file descriptor")
        }
        let format: ExportFormat
        let workout: Workout
        do throws(DBusError) {
            let text = try Self.text(call, 0, "a workout id")
            let formatName = try Self.text(call, 1, "a format")
            guard let known = ExportFormat(rawValue: formatName) else {
                throw Self.unknown("format", formatName, known: ExportFormat.allCases.map(\.rawValue))
            }
            format = known
            workout = try await self.workout(matching: text)
        } catch {
            close(fd)
            throw error
        }
        do {
            let (name, size) = try await exporter.write(workout, as: format, into: fd)
            return [.string(name), .uint64(UInt64(size))]
        } catch let refusal as WorkoutExporter.Refusal {
            throw DBusError(name: ControlAPI.ErrorName.invalidArguments, message: "\(refusal)")
        } catch let stopped as DescriptorWriter.Failure {
            // The caller's end, not the store: its reader went away, stalled, or the descriptor takes no writing.
            throw DBusError(.failed, "the export stopped: \(stopped)")
        } catch {
            throw DBusError(name: ControlAPI.ErrorName.store, message: "the export failed: \(error)")
        }
    }

    private func getWorkout(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let workout = try await workout(matching: try Self.text(call, 0, "a workout id"))
        var values = WorkoutValues.values(of: workout)
        values.merge(AnalysisValues.values(of: try await recording(of: workout), profile: profile)) { $1 }
        let perMinute = try await Self.storeCall {
            try await WorkoutChart.heartRatePerMinute(of: workout, in: self.store)
        }
        values["heartRatePerMinute"] = .array(.double, perMinute.map { .double($0 ?? .nan) })
        return [.propertyMap(values)]
    }

    private func statistics(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let typeName = try Self.text(call, 0, "a sample type")
        let intervalName = try Self.text(call, 1, "an interval")
        guard let type = QuantityType(identifier: typeName) else {
            throw Self.unknown("sample type", typeName, known: QuantityType.known.map(\.identifier))
        }
        let interval: StatisticsInterval
        do {
            interval = try StatisticsRequest.interval(intervalName)
            let from = try StatisticsRequest.date(try call.argument(2, "from").double ?? .nan, "from")
            let to = try StatisticsRequest.date(try call.argument(3, "to").double ?? .nan, "to")
            try StatisticsRequest.checkRange(from: from, to: to, interval: interval)
            return try await buckets(of: type, from: from, to: to, interval: interval)
        } catch let refusal as StatisticsRequest.Refusal {
            throw DBusError(name: ControlAPI.ErrorName.invalidArguments, message: refusal.message)
        } catch let error as DBusError {
            throw error
        } catch {
            throw DBusError(name: ControlAPI.ErrorName.store, message: "\(error)")
        }
    }

    private func buckets(
        of type: QuantityType,
        from: Date,
        to: Date,
        interval: StatisticsInterval
    ) async throws(DBusError) -> [DBusValue] {
        let buckets = try await Self.storeCall {
            try await self.store.statisticsCollection(of: type, from: from, to: to, anchor: from, interval: interval)
        }
        return [.array(.propertyMap, buckets.map { .propertyMap(WorkoutValues.values(of: $0)) })]
    }
}
