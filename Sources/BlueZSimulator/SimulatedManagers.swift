import DBus

extension BlueZSimulator {
    static let agentManagerInterface = "org.bluez.AgentManager1"
    static let gattManagerInterface = "org.bluez.GattManager1"
    static let capabilities = ["", "DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput", "KeyboardDisplay"]

    /// `/org/bluez` with `AgentManager1`.
    func makeRootObject() -> DBusObject {
        let object = DBusObject(path: "/org/bluez")
        let weakSelf = WeakSimulator(self)
        object.addInterface(
            DBusInterface(
                Self.agentManagerInterface,
                methods: [
                    DBusMethod("RegisterAgent", inputs: [("agent", .objectPath), ("capability", .string)]) {
                        call throws(DBusError) in
                        try await weakSelf.get().registerAgent(
                            client: call.sender,
                            path: call.arguments[0].string ?? "",
                            capability: call.arguments[1].string ?? ""
                        )
                        return []
                    },
                    DBusMethod("UnregisterAgent", inputs: [("agent", .objectPath)]) { call throws(DBusError) in
                        try await weakSelf.get().unregisterAgent(
                            client: call.sender,
                            path: call.arguments[0].string ?? ""
                        )
                        return []
                    },
                    DBusMethod("RequestDefaultAgent", inputs: [("agent", .objectPath)]) { call throws(DBusError) in
                        try await weakSelf.get().requestDefaultAgent(
                            client: call.sender,
                            path: call.arguments[0].string ?? ""
                        )
                        return []
                    },
                ]
            )
        )
        // bluetoothd 5.66 has these too; their methods are not played (a call gets UnknownMethod).
        object.addInterface(DBusInterface("org.bluez.ProfileManager1"))
        object.addInterface(DBusInterface("org.bluez.HealthManager1"))
        return object
    }

    /// The interfaces bluetoothd 5.66's plugins add to every adapter, with the values it shows for a btvirt LE
    /// controller, so a client listing an adapter sees what it would with bluetoothd. Their methods are not played
    /// (a call gets UnknownMethod).
    static func addPluginInterfaces(to adapter: DBusObject) {
        adapter.addInterface(DBusInterface("org.bluez.BatteryProviderManager1"))
        adapter.addInterface(DBusInterface("org.bluez.NetworkServer1"))
        adapter.addInterface(
            DBusInterface("org.bluez.SimAccess1", properties: [DBusProperty("Connected", .boolean)]),
            values: ["Connected": .boolean(false)]
        )
        adapter.addInterface(
            DBusInterface("org.bluez.Media1", properties: [DBusProperty("SupportedUUIDs", .array(.string))]),
            values: [
                "SupportedUUIDs": .strings([
                    "0000110a-0000-1000-8000-00805f9b34fb", "0000110b-0000-1000-8000-00805f9b34fb",
                ])
            ]
        )
        adapter.addInterface(
            DBusInterface(
                "org.bluez.AdvertisementMonitorManager1",
                properties: [
                    DBusProperty("SupportedMonitorTypes", .array(.string)),
                    DBusProperty("SupportedFeatures", .array(.string)),
                ]
            ),
            values: ["SupportedMonitorTypes": .strings(["or_patterns"]), "SupportedFeatures": .strings([])]
        )
        adapter.addInterface(
            DBusInterface(
                "org.bluez.LEAdvertisingManager1",
                properties: [
                    DBusProperty("ActiveInstances", .byte), DBusProperty("SupportedInstances", .byte),
                    DBusProperty("SupportedIncludes", .array(.string)),
                    DBusProperty("SupportedFeatures", .array(.string)),
                    DBusProperty("SupportedCapabilities", .array(.dictEntry(key: .string, value: .variant))),
                ]
            ),
            values: [
                "ActiveInstances": .byte(0), "SupportedInstances": .byte(5),
                "SupportedIncludes": .strings(["tx-power", "appearance", "local-name"]),
                "SupportedFeatures": .strings([]),
                "SupportedCapabilities": .propertyMap(["MaxAdvLen": .byte(31), "MaxScnRspLen": .byte(31)]),
            ]
        )
    }

    func registerAgent(client: String, path: String, capability: String) throws(DBusError) {
        guard Self.capabilities.contains(capability) else { throw SimError.invalidArguments() }
        guard agents[client] == nil else { throw SimError.alreadyExists }
        agents[client] = (path, capability.isEmpty ? "KeyboardDisplay" : capability)
        updatePairable()
    }

    /// bluetoothd makes adapters pairable only while some agent is registered.
    func updatePairable() {
        for adapter in adapters {
            adapter.object.setProperty(Self.adapterInterface, "Pairable", .boolean(!agents.isEmpty))
        }
    }

    func unregisterAgent(client: String, path: String) throws(DBusError) {
        guard agents[client]?.path == path else { throw SimError.doesNotExist }
        agents.removeValue(forKey: client)
        defaultAgents.removeAll { $0 == client }
        updatePairable()
    }

    /// Puts the agent at the head of the queue of default agents (BlueZ's `add_default_agent`); the one it
    /// replaces is not told, and is the default again when this one goes.
    func requestDefaultAgent(client: String, path: String) throws(DBusError) {
        guard agents[client]?.path == path else { throw SimError.doesNotExist }
        defaultAgents.removeAll { $0 == client }
        defaultAgents.insert(client, at: 0)
    }

    /// The default agent, as bluetoothd's `agent_get(NULL)` finds it.
    var defaultAgent: (client: String, path: String)? {
        guard let client = defaultAgents.first, let agent = agents[client] else { return nil }
        return (client, agent.path)
    }

    // MARK: GattManager1

    func makeGattManager(adapter: Int, path: String) -> DBusInterface {
        let weakSelf = WeakSimulator(self)
        return DBusInterface(
            Self.gattManagerInterface,
            methods: [
                DBusMethod(
                    "RegisterApplication",
                    inputs: [
                        ("application", .objectPath), ("options", .array(.dictEntry(key: .string, value: .variant))),
                    ]
                ) { call throws(DBusError) in
                    try await weakSelf.get().registerApplication(
                        client: call.sender,
                        root: call.arguments[0].string ?? ""
                    )
                    return []
                },
                DBusMethod("UnregisterApplication", inputs: [("application", .objectPath)]) { call throws(DBusError) in
                    try await weakSelf.get().unregisterApplication(
                        client: call.sender,
                        root: call.arguments[0].string ?? ""
                    )
                    return []
                },
            ]
        )
    }

    /// Reads the application's objects (its `GetManagedObjects`) and keeps the `GattProfile1` UUIDs, which put
    /// matching devices on the auto-connect list.
    func registerApplication(client: String, root: String) async throws(DBusError) {
        let key = ApplicationKey(owner: client, root: root)
        guard applications[key] == nil else { throw SimError.alreadyExists }
        guard let connection else { throw SimError.notReady }
        let reply: [DBusValue]
        do {
            reply = try await connection.call(
                destination: client,
                path: root,
                interface: "org.freedesktop.DBus.ObjectManager",
                method: "GetManagedObjects"
            )
        } catch {
            throw SimError.failed("Failed to read application objects: \(error.message)")
        }
        var uuids: [String] = []
        var paths: [String] = []
        for entry in reply.first?.dictionaryEntries ?? [] {
            for interface in entry.value.dictionaryEntries ?? [] where interface.key.string == "org.bluez.GattProfile1"
            {
                paths.append(entry.key.string ?? "")
                for uuid in interface.value.propertyMap?["UUIDs"]?.strings ?? [] {
                    uuids.append(try Self.normalisedUUID(uuid))
                }
            }
        }
        guard !uuids.isEmpty else { throw SimError.invalidArguments("No object found implementing a GATT profile") }
        applications[key] = uuids
        profilePaths[key] = paths
        // The kernel connects when the sensor next advertises: after the reply, never inside it.
        let weakSelf = WeakSimulator(self)
        Task {
            try? await Task.sleep(for: .milliseconds(150))
            guard let simulator = weakSelf.value else { return }
            await simulator.autoConnectSensorsInRange()
        }
    }

    func autoConnectSensorsInRange() {
        for sensor in sensors.indices where sensors[sensor].inRange { autoConnect(sensor: sensor) }
    }

    func unregisterApplication(client: String, root: String) async throws(DBusError) {
        let key = ApplicationKey(owner: client, root: root)
        guard applications.removeValue(forKey: key) != nil else { throw SimError.doesNotExist }
        // bluetoothd tells each profile object it was released (best effort: a client may refuse).
        guard let connection else { return }
        for path in profilePaths.removeValue(forKey: key) ?? [] {
            _ = try? await connection.call(
                destination: client,
                path: path,
                interface: "org.bluez.GattProfile1",
                method: "Release"
            )
        }
    }
}
