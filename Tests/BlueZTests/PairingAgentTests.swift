import BlueZSimulator
import DBus
import HeartRateProfile
import Synchronization
import Testing

@testable import BlueZ

/// `PairingAgent` against the simulator: not the default agent while idle, a window for one device at a time, the
/// default given back, HID never.
@Suite struct PairingAgentTests {
    /// Earbuds that need pairing, played as the real-stack VM plays them (a second adapter of the same bluetoothd),
    /// and a keyboard.
    func earbudsAndKeyboard() -> Scenario {
        var scenario = Scenario()
        scenario.adapters = [.init(), .init()]
        scenario.mirrorPairing = true
        var earbuds = Scenario.SensorSpec(model: .powerbeatsPro2)
        earbuds.rate = 5
        scenario.sensors = [earbuds, Scenario.SensorSpec(model: .keyboard)]
        return scenario
    }

    @Test func outsideAPairingEveryRequestIsRefusedAndHIDAlways() async throws {
        try await withSimulator(earbudsAndKeyboard()) { bt in
            let agent = PairingAgent()
            try await agent.register(with: bt.client)
            #expect(await bt.simulator.defaultAgentOwner == nil, "registering does not make it the default")
            let keyboard = await bt.simulator.sensorAddresses[1]
            await #expect(throws: DBusError.self) {
                try await bt.simulator.askDefaultAgent("RequestAuthorization", device: keyboard)
            }
            for request in ["RequestConfirmation", "RequestAuthorization", "AuthorizeService"] {
                #expect(agent.refusal(request, device: "/org/bluez/hci0/dev_DC_2C_26_00_00_01") != nil)
            }
            #expect(
                agent.refusal("AuthorizeService", device: "/any", service: BluetoothUUID(0x1124))?.contains("input")
                    == true
            )
            #expect(agent.refusal("AuthorizeService", device: "/any", service: BluetoothUUID(0x1812)) != nil)
        }
    }

    @Test func aPairingWindowAnswersItsOwnPairingAndGivesTheDefaultBack() async throws {
        try await withSimulator(earbudsAndKeyboard()) { bt in
            // Another agent (a desktop's) is the default first.
            let desktop = try await DBusConnection.connect(to: .address(bt.bus.address))
            defer { desktop.close() }
            let object = DBusObject(path: "/desktop")
            object.addInterface(
                DBusInterface(
                    "org.bluez.Agent1",
                    methods: [
                        DBusMethod("RequestAuthorization", inputs: [("device", .objectPath)]) { _ throws(DBusError) in
                            throw DBusError(name: "org.bluez.Error.Rejected", message: "no")
                        }
                    ]
                )
            )
            desktop.export(object)
            for method in ["RegisterAgent", "RequestDefaultAgent"] {
                _ = try await desktop.call(
                    destination: "org.bluez",
                    path: "/org/bluez",
                    interface: "org.bluez.AgentManager1",
                    method: method,
                    arguments: method == "RegisterAgent"
                        ? [.objectPath("/desktop"), .string("")] : [.objectPath("/desktop")]
                )
            }
            let refusals = RefusalLog()
            let agent = PairingAgent { refusals.append($0) }
            try await agent.register(with: bt.client)
            var options = fastOptions()
            options.agent = agent
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: options,
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { $0.readings.count >= 2 }
            #expect(events.states.contains(.pairing))
            #expect(events.readings.count >= 2, "the peripheral side's request was answered: \(events.states)")
            #expect(await bt.simulator.defaultAgentOwner?.client == desktop.uniqueName)
            #expect(!agent.isPairing)
            #expect(refusals.lines.isEmpty, "\(refusals.lines)")
        }
    }

    @Test func claimsKeepEachSensorForOneHolder() throws {
        let claims = SensorClaims()
        let a = try BluetoothAddress("A0:9E:1A:00:00:01")
        let b = try BluetoothAddress("A0:9E:1A:00:00:02")
        let c = try BluetoothAddress("A0:9E:1A:00:00:03")
        claims.reserve(c)
        let first = ObjectIdentifier(RefusalLog())
        let second = ObjectIdentifier(DBusObject(path: "/x"))
        #expect(claims.claimFirst(of: [c, a, b], for: first) == a, "reserved addresses are skipped")
        #expect(claims.claimFirst(of: [a, b], for: second) == b, "so are others' claims")
        #expect(claims.claimFirst(of: [a], for: second) == nil)
        #expect(claims.claimFirst(of: [a], for: first) == a, "a holder keeps its own")
        claims.release(first)
        #expect(claims.claimFirst(of: [a], for: second) == a)
    }
}

final class RefusalLog: Sendable {
    private let recorded = Mutex<[String]>([])
    var lines: [String] { recorded.withLock { $0 } }
    func append(_ line: String) { recorded.withLock { $0.append(line) } }
}
