import DBus
import HeartRateProfile

/// What bluetoothd asks agents, and the simulator's test-only interface for making it ask.
///
/// bluetoothd calls an agent's `RequestConfirmation`, `RequestAuthorization` and `AuthorizeService` for requests
/// that come from the air rather than from a D-Bus call: a device starting to pair (Just Works: authorisation; numeric
/// comparison: confirmation), a device re-pairing, an untrusted device connecting to a profile such as HID. Those go
/// to the default agent. The simulator plays them on demand (``askDefaultAgent(_:device:uuid:)``, or
/// `org.systole.Simulator1.AskDefaultAgent` from another process), and for ``Scenario/mirrorPairing``.
extension BlueZSimulator {
    /// The well-known name of the test-only interface, on a connection of its own (clients of `org.bluez` never
    /// see it).
    public static let testBusName = "org.systole.Simulator"
    public static let testObjectPath = "/org/systole/Simulator"
    public static let testInterface = "org.systole.Simulator1"
    /// The requests ``askDefaultAgent(_:device:uuid:)`` can make.
    public static let agentRequests = ["RequestConfirmation", "RequestAuthorization", "AuthorizeService"]

    /// The unique name and object path of the default agent (the head of bluetoothd's queue), if any.
    public var defaultAgentOwner: (client: String, path: String)? { defaultAgent }

    /// Makes bluetoothd ask the default agent `request` about the device with `address` (made known on hci0 first
    /// if it is not, as bluetoothd does when a device connects in). Returns when the agent accepts; throws its
    /// refusal, or `org.bluez.Error.DoesNotExist` when there is no default agent or no such device.
    ///
    /// - Parameter uuid: the service for `AuthorizeService` (16-bit or 128-bit form).
    public func askDefaultAgent(_ request: String, device address: String, uuid: String = "") async throws(DBusError) {
        guard Self.agentRequests.contains(request) else {
            throw SimError.invalidArguments("unknown request '\(request)'; known: \(Self.agentRequests)")
        }
        let path = try knownDevicePath(address.uppercased())
        var arguments: [DBusValue] = [.objectPath(path)]
        switch request {
        case "RequestConfirmation": arguments.append(.uint32(UInt32(airRandom.next() % 1_000_000)))
        case "AuthorizeService": arguments.append(.string(try Self.normalisedUUID(uuid)))
        default: break
        }
        try await callDefaultAgent(request, arguments)
    }

    /// The path of a known device with `address`, hci0's first; a simulated device that is not known yet is added.
    private func knownDevicePath(_ address: String) throws(DBusError) -> String {
        let known = devices.values.filter { sensors[$0.sensor].address == address }.sorted { $0.adapter < $1.adapter }
        if let device = known.first { return device.path }
        guard let sensor = sensors.firstIndex(where: { $0.address == address }), !adapters.isEmpty else {
            throw SimError.doesNotExist
        }
        addDevice(sensor: sensor, adapter: 0, paired: false)
        return devicePath(adapter: 0, sensor: sensor)
    }

    private func callDefaultAgent(_ method: String, _ arguments: [DBusValue]) async throws(DBusError) {
        guard let connection, let agent = defaultAgent else {
            throw SimError.make("DoesNotExist", "No default agent")
        }
        _ = try await connection.call(
            destination: agent.client,
            path: agent.path,
            interface: "org.bluez.Agent1",
            method: method,
            arguments: arguments,
            timeout: .seconds(10)
        )
    }

    /// The peripheral side of a pairing on the sensors' own adapter (``Scenario/mirrorPairing``): it sees the
    /// central as a device whose address is the pairing adapter's, and asks the default agent to authorise the
    /// Just Works pairing it did not start. A refusal, or no default agent, fails the pairing.
    func askPeripheralSide(pairing path: String) async throws(DBusError) {
        guard let device = devices[path], let connection else { return }
        let peripheral = adapters.indices.last(where: { $0 != device.adapter }) ?? device.adapter
        let central = adapterAddress(device.adapter)
        let mirror = "/org/bluez/hci\(peripheral)/dev_" + central.replacingOccurrences(of: ":", with: "_")
        if mirrorDevices[mirror] == nil {
            let object = DBusObject(path: mirror)
            object.addInterface(
                DBusInterface(
                    Self.deviceInterface,
                    properties: [
                        DBusProperty("Address", .string), DBusProperty("AddressType", .string),
                        DBusProperty("Alias", .string), DBusProperty("Paired", .boolean),
                        DBusProperty("Connected", .boolean), DBusProperty("Adapter", .objectPath),
                        DBusProperty("UUIDs", .array(.string)),
                    ]
                ),
                values: [
                    "Address": .string(central), "AddressType": .string("public"), "Alias": .string(central),
                    "Paired": .boolean(false), "Connected": .boolean(true),
                    "Adapter": .objectPath("/org/bluez/hci\(peripheral)"), "UUIDs": .strings([]),
                ]
            )
            mirrorDevices[mirror] = object
            connection.export(object)
        }
        do {
            try await callDefaultAgent("RequestAuthorization", [.objectPath(mirror)])
        } catch {
            linkLost(path)
            throw SimError.make("AuthenticationFailed", "Authentication Failed")
        }
        mirrorDevices[mirror]?.setProperty(Self.deviceInterface, "Paired", .boolean(true))
    }

    // MARK: Test-only interface

    /// Takes ``testBusName`` on a connection of its own and exports `org.systole.Simulator1`: `DefaultAgent() →
    /// (s owner, s path)` (empty strings when there is none), `AskDefaultAgent(s request, s address, s uuid) →
    /// (s outcome)` ("accepted", or the refusal as "name: message"), `PlayFault(s address, s fault)` (a scenario
    /// fault as JSON, its `at` counted from now: see ``play(_:sensor:)``) and `RestartBluetoothd(d downtime)`.
    /// Does nothing if the name is taken.
    func startTestInterface() async {
        guard let connection = try? await DBusConnection.connect(to: bus) else { return }
        let weakSelf = WeakSimulator(self)
        let object = DBusObject(path: Self.testObjectPath)
        object.addInterface(
            DBusInterface(
                Self.testInterface,
                methods: [
                    DBusMethod("DefaultAgent", outputs: [("owner", .string), ("path", .string)]) {
                        _ throws(DBusError) in
                        let agent = try await weakSelf.get().defaultAgentOwner
                        return [.string(agent?.client ?? ""), .string(agent?.path ?? "")]
                    },
                    DBusMethod(
                        "AskDefaultAgent",
                        inputs: [("request", .string), ("address", .string), ("uuid", .string)],
                        outputs: [("outcome", .string)]
                    ) { call throws(DBusError) in
                        let simulator = try weakSelf.get()
                        do throws(DBusError) {
                            try await simulator.askDefaultAgent(
                                call.arguments[0].string ?? "",
                                device: call.arguments[1].string ?? "",
                                uuid: call.arguments[2].string ?? ""
                            )
                            return [.string("accepted")]
                        } catch {
                            return [.string("\(error.name): \(error.message)")]
                        }
                    },
                    DBusMethod("PlayFault", inputs: [("address", .string), ("fault", .string)]) {
                        call throws(DBusError) in
                        try await weakSelf.get().playFault(
                            address: call.arguments[0].string ?? "",
                            json: call.arguments[1].string ?? ""
                        )
                        return []
                    },
                    DBusMethod("RestartBluetoothd", inputs: [("downtime", .double)]) { call throws(DBusError) in
                        let downtime = call.arguments[0].double ?? .nan
                        guard downtime >= 0, downtime <= 600 else {
                            throw DBusError(.invalidArgs, "downtime must be between 0 and 600 seconds")
                        }
                        do {
                            try await weakSelf.get().restartBluetoothd(downtime: .seconds(downtime))
                        } catch {
                            throw DBusError(.failed, "the restart failed: \(error)")
                        }
                        return []
                    },
                ]
            )
        )
        connection.export(object)
        guard (try? await connection.requestName(Self.testBusName, flags: [.doNotQueue])) == .primaryOwner else {
            connection.close()
            return
        }
        testConnection = connection
    }
}
