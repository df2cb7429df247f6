import BlueZ
import BlueZSimulator
import DBus
import Synchronization
import SystoleTestSupport
import Testing

@testable import HeartRateSensors

/// A sensor that needs pairing, paired through `PairingAgent`'s window for it alone, with the default agent given
/// back; and the claims that keep each sensor for one holder.
@Suite struct SensorPairingTests {
    @Test func aPairingWindowAnswersItsOwnPairingAndGivesTheDefaultBack() async throws {
        try await withSimulator(.earbudsAndKeyboard()) { bt in
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
