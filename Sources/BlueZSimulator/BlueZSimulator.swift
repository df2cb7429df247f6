import DBus
import Foundation
import HeartRateProfile
import PolarMeasurementData

/// Plays bluetoothd's `org.bluez` API on a bus, with simulated heart-rate sensors in the air.
///
/// It exports what BlueZ documents: the object manager on `/`, `AgentManager1` on `/org/bluez`, `Adapter1` and
/// `GattManager1` on `/org/bluez/hciN`, devices appearing during discovery, GATT objects after `Connect`,
/// notifications as `PropertiesChanged` of `Value`, and `org.bluez.Error.*` replies where BlueZ gives them.
public actor BlueZSimulator {
    public let scenario: Scenario
    let bus: DBusBus
    var connection: DBusConnection?
    /// Time zero of the scenario: when ``start()`` was called.
    private(set) var start = ContinuousClock.now
    let emitLog: EmitLog?
    /// Every emitted notification, when asked for (tests).
    var emitted: [EmittedNotification] = []
    let recordsEmissions: Bool

    var sensors: [SimulatedSensor] = []
    var adapters: [SimulatedAdapter] = []
    /// Devices by object path.
    var devices: [String: SimulatedDevice] = [:]
    /// Agents by the unique name of the client that registered them.
    var agents: [String: (path: String, capability: String)] = [:]
    /// Clients whose agents asked to be the default, the current default first: bluetoothd keeps a queue, so when
    /// the default agent goes (UnregisterAgent, or its client leaves), the one before it is the default again.
    var defaultAgents: [String] = []
    /// Devices of the other side of a pairing, as bluetoothd shows them on the peripheral's adapter
    /// (``Scenario/mirrorPairing``), by path.
    var mirrorDevices: [String: DBusObject] = [:]
    /// The connection of the test-only `org.systole.Simulator1` interface (independent of `org.bluez`).
    var testConnection: DBusConnection?
    /// Registered GATT applications: (client, root) → profile UUIDs.
    var applications: [ApplicationKey: [String]] = [:]
    /// The `GattProfile1` objects of each application, told `Release` when it is unregistered.
    var profilePaths: [ApplicationKey: [String]] = [:]
    var tasks: [Task<Void, Never>] = []
    /// The notify sessions clients held when they left the bus, as "client path kind" (see `stopNotify`). Unique
    /// names are never reused on a bus, so an entry cannot be mistaken for a later client's.
    var sessionsOfDepartedClients: Set<String> = []
    var gattWithheld = false
    var restartsDone = 0
    /// Links a flap fault dropped, and flap faults played to their end.
    public private(set) var flapDrops = 0
    public private(set) var flapsPlayed = 0
    /// Seeds radio conditions (RSSI), separately from the sensors' payloads.
    var airRandom: SeededRandom
    var hasStarted = false
    /// Whether `org.bluez` is currently on the bus (false during a simulated restart).
    public private(set) var isRunning = false

    struct ApplicationKey: Hashable {
        var owner: String
        var root: String
    }

    /// - Parameters:
    ///   - emitLogPath: where to write the JSON-lines emit log (nil: none).
    ///   - recordEmissions: keep every emitted notification in memory for ``emittedNotifications()``.
    public init(
        scenario: Scenario,
        bus: DBusBus,
        emitLogPath: String? = nil,
        recordEmissions: Bool = false
    ) throws {
        try scenario.validate()
        self.scenario = scenario
        self.bus = bus
        self.emitLog = try emitLogPath.map(EmitLog.init(path:))
        self.recordsEmissions = recordEmissions
        var sensors: [SimulatedSensor] = []
        var random = SeededRandom(seed: scenario.seed)
        for spec in scenario.sensors {
            for _ in 0..<spec.count {
                sensors.append(SimulatedSensor(spec: spec, index: sensors.count, random: &random))
            }
        }
        for index in sensors.indices {
            if let path = sensors[index].spec.pmd?.ecgFile {
                sensors[index].recordedECG = try PMDSpec.loadECG(path: path)
            }
        }
        self.sensors = sensors
        airRandom = SeededRandom(seed: scenario.seed ^ 0xA1A1_A1A1)
    }

    /// Seconds since the simulator was created.
    var now: Double {
        (ContinuousClock.now - start).seconds
    }

    /// Time since ``start()``, on the clock the scenario's times are counted on.
    public var elapsed: Duration { ContinuousClock.now - start }

    /// The simulated sensors' addresses, in scenario order.
    public var sensorAddresses: [String] { sensors.map(\.address) }

    /// How many GATT applications (auto-connect profiles) clients have registered with this bluetoothd.
    public var registeredApplications: Int { applications.count }

    /// From now on, services resolve without their GATT objects ever being announced (as if bluetoothd lost the
    /// database): for testing what a client does with a device that has no 0x2A37.
    public func withholdGattObjects() { gattWithheld = true }

    /// Every notification emitted so far (only with `recordEmissions`).
    public func emittedNotifications() -> [EmittedNotification] { emitted }

    // MARK: Life cycle

    /// Connects to the bus, takes `org.bluez` and starts the sensors' clocks.
    public func start() async throws {
        start = .now
        try await comeUp()
        await startTestInterface()
        for index in sensors.indices {
            let task = Task { [weak self] () -> Void in await self?.runSensor(index) }
            tasks.append(task)
            if sensors[index].spec.pmd != nil {
                tasks.append(Task { [weak self] () -> Void in await self?.runPMD(index) })
            }
            for flap in sensors[index].behaviour.faults where flap.kind == .flap {
                tasks.append(Task { [weak self] () -> Void in await self?.runFlap(flap, sensor: index) })
            }
        }
        tasks.append(Task { [weak self] () -> Void in await self?.runAir() })
    }

    /// Leaves the bus and stops every clock.
    public func stop() {
        for task in tasks { task.cancel() }
        tasks = []
        goDown()
        testConnection?.close()
        testConnection = nil
    }

    /// Simulates bluetoothd restarting: the name and every object go away, and come back after `downtime`
    /// with a new unique name (only paired devices survive, disconnected). Stopped as systemd stops it unless
    /// `crash`, when its connection just closes.
    public func restartBluetoothd(downtime: Duration = .milliseconds(500), crash: Bool = false) async throws {
        if !crash { await stopGracefully() }
        goDown()
        try await Task.sleep(for: downtime)
        try await comeUp()
    }

    /// Takes the name on a fresh connection and exports adapters and known devices.
    func comeUp() async throws {
        let connection = try await DBusConnection.connect(to: bus)
        self.connection = connection
        connection.addObjectManager(at: "/")
        connection.export(makeRootObject())
        adapters = scenario.adapters.indices.map { makeAdapter($0) }
        for adapter in adapters { connection.export(adapter.object) }
        let restarting = hasStarted
        if restarting {
            for adapter in adapters {
                adapter.object.setProperties(
                    Self.adapterInterface,
                    ["Powered": .boolean(false), "PowerState": .string("off-enabling")]
                )
            }
        }
        // Devices paired earlier are loaded from storage at start, as bluetoothd does.
        for sensor in sensors where sensor.pairedAtStart || sensor.bonded {
            for adapter in adapters where scenario.adapters[adapter.index].seesSensors {
                addDevice(sensor: sensor.index, adapter: adapter.index, paired: true)
            }
        }
        try await watchClients(on: connection)
        let reply = try await connection.requestName("org.bluez", flags: [.doNotQueue])
        guard reply == .primaryOwner else {
            connection.close()
            self.connection = nil
            throw DBusError(
                .failed,
                "org.bluez is already owned on this bus (is bluetoothd or another simulator running?)"
            )
        }
        isRunning = true
        hasStarted = true
        if restarting {
            // A restarted bluetoothd brings its adapters up a moment after taking the name.
            let powered = adapters.filter { scenario.adapters[$0.index].powered }
            try? await Task.sleep(for: .milliseconds(100))
            for adapter in powered {
                adapter.object.setProperties(
                    Self.adapterInterface,
                    ["Powered": .boolean(true), "PowerState": .string("on")]
                )
            }
        }
    }

    /// What bluetoothd 5.66 does on SIGTERM, in the order the VM's trace showed: Battery1 goes, adapters start
    /// powering down, links drop (ServicesResolved and Connected false), adapters are off, `/org/bluez` goes,
    /// agents are told Release, devices and their GATT objects go, GATT profiles are told Release, then the
    /// adapters go. Then the name is released (``goDown()``).
    func stopGracefully() async {
        guard let connection, isRunning else { return }
        let connected = devices.filter(\.value.connected).map(\.key)
        for path in connected { devices[path]?.object.removeInterface(Self.batteryInterface) }
        for adapter in adapters where isPowered(adapter.index) {
            adapter.object.setProperties(Self.adapterInterface, ["PowerState": .string("on-disabling")])
        }
        for path in connected {
            linkLost(path)
        }
        for adapter in adapters {
            adapter.object.setProperties(
                Self.adapterInterface,
                ["PowerState": .string("off"), "Powered": .boolean(false), "Discovering": .boolean(false)]
            )
        }
        connection.unexport(path: "/org/bluez")
        for (client, agent) in agents {
            _ = try? await connection.call(
                destination: client,
                path: agent.path,
                interface: "org.bluez.Agent1",
                method: "Release",
                timeout: .seconds(1)
            )
        }
        for device in devices.values {
            device.gatt?.unexport(from: connection)
            connection.unexport(path: device.path)
        }
        for (key, paths) in profilePaths {
            for path in paths {
                _ = try? await connection.call(
                    destination: key.owner,
                    path: path,
                    interface: "org.bluez.GattProfile1",
                    method: "Release",
                    timeout: .seconds(1)
                )
            }
        }
        for adapter in adapters { connection.unexport(path: adapter.object.path) }
    }

    /// Drops the connection: to clients this looks exactly like bluetoothd exiting.
    func goDown() {
        for path in devices.keys { releaseAcquired(path) }
        connection?.close()
        connection = nil
        isRunning = false
        devices = [:]
        adapters = []
        agents = [:]
        defaultAgents = []
        mirrorDevices = [:]
        applications = [:]
        profilePaths = [:]
        for index in sensors.indices { sensors[index].connectedVia = nil }
    }

    /// Ends what a client owned when it leaves the bus: notify sessions, discovery, agent, applications.
    private func watchClients(on connection: DBusConnection) async throws {
        // A departure's handling awaits the simulator: the loop thread hands the name to a task of its own.
        let (departures, departed) = AsyncStream<String>.makeStream()
        let subscription = try await connection.subscribe(
            to: DBusMatchRule(
                sender: "org.freedesktop.DBus",
                interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged"
            )
        ) { signal in
            guard signal.arguments.count == 3, let name = signal.arguments[0].string, name.hasPrefix(":"),
                signal.arguments[2].string == ""
            else { return }
            departed.yield(name)
        }
        let task = Task { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    try? await subscription.ended()
                    departed.finish()
                }
                for await name in departures { await self?.clientLeft(name) }
                group.cancelAll()
            }
        }
        tasks.append(task)
    }

    func clientLeft(_ name: String) {
        agents.removeValue(forKey: name)
        defaultAgents.removeAll { $0 == name }
        applications = applications.filter { $0.key.owner != name }
        profilePaths = profilePaths.filter { $0.key.owner != name }
        updatePairable()
        for adapter in adapters { stopDiscovery(adapter: adapter.index, client: name) }
        for (path, device) in devices {
            if device.heartRateSessions.contains(name) {
                sessionsOfDepartedClients.insert(Self.sessionKey(name, path, .measurement))
            }
            if device.batterySessions.contains(name) {
                sessionsOfDepartedClients.insert(Self.sessionKey(name, path, .battery))
            }
            if device.pmdControlSessions.contains(name) {
                sessionsOfDepartedClients.insert(Self.sessionKey(name, path, .pmdControlPoint))
            }
            if device.pmdDataSessions.contains(name) {
                sessionsOfDepartedClients.insert(Self.sessionKey(name, path, .pmdData))
            }
            devices[path]?.dropSessions(of: name)
            if device.acquired?.client == name { releaseAcquired(path) }
        }
    }

    static func sessionKey(_ client: String, _ path: String, _ kind: Characteristic) -> String {
        "\(client) \(path) \(kind)"
    }

    // MARK: Clocks

    /// Emits the sensor's notifications at its rate, from the first second on. Sensors are spread evenly over
    /// the period (sensor i of n starts i/n of a period late): real straps are not in step, and sensors that
    /// all notify at once would hand a consumer its readings in a few large bursts instead of one by one.
    ///
    /// Each sensor has a clock of its own, due times fixed in advance (a late tick does not delay the next): a
    /// sensor in a storm costs the others only the moments its ticks hold the simulator, and the honest sensors'
    /// notifications keep their times (docs/simulator.md, "Hostile devices").
    private func runSensor(_ index: Int) async {
        let rate = sensors[index].rate
        let phase = Double(index) / Double(sensors.count)
        var time = 0.0
        while !Task.isCancelled {
            time = sensors[index].behaviour.nextNotificationTime(after: time, rate: rate, phase: phase)
            sensors[index].nextDue = time
            try? await Task.sleep(until: start + .seconds(time), tolerance: .milliseconds(2), clock: .continuous)
            if Task.isCancelled { return }
            tick(index, at: time)
        }
    }

    /// Plays a flap fault of sensor `index`: the link drops at the start of each period and the sensor advertises
    /// again half a period later, when bluetoothd's auto-connect list (a registered `GattProfile1`) takes it back
    /// at once, as the kernel does; without one, the link stays down until a client's Connect(). The steps are due
    /// on a fixed grid, so a late one does not shift the next: a busy machine plays them all, some later.
    func runFlap(_ flap: Scenario.FaultSpec, sensor index: Int) async {
        let half = 0.5 / flap.effectiveRate
        var step = 0
        while !Task.isCancelled {
            let time = flap.at + Double(step) * half
            guard flap.covers(time) else { break }
            try? await Task.sleep(until: start + .seconds(time), tolerance: .microseconds(500), clock: .continuous)
            if Task.isCancelled { return }
            if step % 2 == 0 {
                if isRunning, let path = sensors[index].connectedVia {
                    linkLost(path)
                    flapDrops += 1
                }
            } else if isRunning, sensors[index].inRange {
                autoConnect(sensor: index)
            }
            step += 1
        }
        // A window that ends on a drop still leaves the sensor advertising.
        if isRunning, sensors[index].inRange { autoConnect(sensor: index) }
        flapsPlayed += 1
    }

    private func tick(_ index: Int, at time: Double) {
        let notification = sensors[index].behaviour.notification(at: time)
        guard !notification.dropped, !sensors[index].behaviour.isOutOfRange(at: time),
            let path = sensors[index].connectedVia, let device = devices[path], !device.disconnecting,
            let gatt = device.gatt, !device.heartRateSessions.isEmpty || device.acquired != nil,
            time >= device.notifyingSince
        else { return }
        if device.acquired != nil {
            // Acquired: a datagram on the socket, Value left alone and no signal, as bluetoothd does.
            guard sendAcquired(path, notification.payload) else { return }
        } else {
            gatt.measurement.setProperties(
                "org.bluez.GattCharacteristic1",
                ["Value": .bytes(notification.payload)],
                emitUnchanged: true
            )
        }
        let entry = EmittedNotification(
            date: Date(),
            sensor: sensors[index].address,
            payload: notification.payload,
            malformed: notification.malformed,
            sensorIndex: index
        )
        emitLog?.record(entry)
        if recordsEmissions { emitted.append(entry) }
    }

    /// Radio conditions, discovery results and restarts, checked four times a second.
    private func runAir() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            if Task.isCancelled { return }
            await airTick()
        }
    }

    private func airTick() async {
        let time = now
        if restartsDone < scenario.restarts.count, time >= scenario.restarts[restartsDone].at {
            let window = scenario.restarts[restartsDone]
            restartsDone += 1
            try? await restartBluetoothd(downtime: .seconds(window.for), crash: window.crash)
            return
        }
        guard isRunning else { return }
        for index in sensors.indices {
            let inRange = !sensors[index].behaviour.isOutOfRange(at: time)
            if sensors[index].inRange != inRange {
                sensors[index].inRange = inRange
                if !inRange, let path = sensors[index].connectedVia { linkLost(path) }
                if inRange { autoConnect(sensor: index) }
            }
        }
        for adapter in adapters where adapter.isDiscovering { discoveryTick(adapter: adapter.index, time: time) }
        removeStaleTemporaryDevices(time: time)
    }
}

/// A sensor in the air (independent of bluetoothd's view of it).
struct SimulatedSensor: Sendable {
    let index: Int
    let spec: Scenario.SensorSpec
    let address: String
    let name: String
    let rate: Double
    let requiresPairing: Bool
    let pairedAtStart: Bool
    var behaviour: SensorBehaviour
    var inRange = true
    /// Bonded with the host (survives bluetoothd restarts).
    var bonded = false
    /// The device path it is connected through, if any.
    var connectedVia: String?
    /// When its clock's next notification is due (a storm played on demand starts then, so none of it is skipped).
    var nextDue = 0.0
    var battery: UInt8
    /// The µV values of its `pmd.ecgFile`, played instead of the synthesized ECG.
    var recordedECG: [Int32]?
    /// Its clock, as PMD frames show it.
    var clock = PolarClock()

    init(spec: Scenario.SensorSpec, index: Int, random: inout SeededRandom) {
        self.index = index
        self.spec = spec
        let serial = UInt32(truncatingIfNeeded: random.next())
        let tail = [UInt8(serial >> 16 & 0xFF), UInt8(serial >> 8 & 0xFF), UInt8(serial & 0xFF)]
        address =
            spec.address?.uppercased()
            ?? (spec.model.addressPrefix + tail).map { hex(UInt32($0), digits: 2) }.joined(separator: ":")
        name = spec.name ?? spec.model.name(serial: serial)
        rate = spec.rate ?? spec.model.defaultRate
        requiresPairing = spec.requiresPairing ?? spec.model.requiresPairing
        pairedAtStart = spec.paired
        bonded = spec.paired
        battery = UInt8(60 + random.next() % 41)
        behaviour = SensorBehaviour(spec: spec, seed: random.next())
        // A sensor out of range from the start is never reachable, not even before the first tick of the air.
        inRange = !behaviour.isOutOfRange(at: 0)
        clock.ppm = spec.pmd?.clockPPM ?? 0
    }

    /// Advertised service UUIDs.
    var advertisedUUIDs: [String] {
        [spec.model.isHeartRateSensor ? BluetoothUUID.heartRateService : BluetoothUUID(0x1812)].map(\.bluezString)
    }
    /// Every service UUID, known once GATT services are resolved.
    var serviceUUIDs: [String] {
        let main = spec.model.isHeartRateSensor ? BluetoothUUID.heartRateService : BluetoothUUID(0x1812)
        return [BluetoothUUID(0x1801), .deviceInformationService, main, .batteryService].map(\.bluezString)
            + (spec.pmd != nil ? [PMDService.serviceUUID] : [])
    }
}
