import ControlAPI
import DBus
import Foundation
import Glibc
import HeartRateProfile
import Synchronization
import SystoleTestSupport
import Testing

/// What systoled lets near the machine's Bluetooth: its agent accepts only the sensor it is pairing, `Pair` and
/// `Forget` reach sensors only, two "any" entries take two sensors, and malformed notifications are counted. The real
/// `systoled`, `systole` and `systole-sim` on a private bus.
@Suite struct BluetoothTrustTests {
    /// The simulator playing `scenario`; each test starts systoled itself, with its configuration.
    func withSetup(scenario: String, _ body: (DaemonHarness) async throws -> Void) async throws {
        var options = DaemonHarness.Options()
        options.name = "systoled-trust"
        options.simulator = []
        options.scenario = scenario
        options.startsDaemon = false
        try await withDaemon(options, body)
    }

    static func device(_ address: String, on adapter: String = "hci0") -> String {
        "/org/bluez/\(adapter)/dev_" + address.replacingOccurrences(of: ":", with: "_")
    }

    static func streaming(_ sensor: [String: Any]) -> Bool { sensor["state"] as? String == "streaming" }

    // MARK: The agent

    @Test func theAgentIsNotTheDefaultWhileIdleAndRefusesAFakeKeyboard() async throws {
        try await withSetup(
            scenario: """
                {"sensors": [{"model": "polar-h10", "rate": 4}, {"model": "keyboard"}]}
                """
        ) { s in
            try await s.startDaemon()
            let strap = s.simulator.addresses[0]
            let keyboard = s.simulator.addresses[1]
            _ = try await s.waitForSensors { $0.first.map(Self.streaming) == true }
            let daemon = try await (try await s.connection()).nameOwner(of: ControlAPI.busName)
            #expect(try await s.defaultAgent().owner != daemon, "systoled is not the default agent while idle")
            // bluetoothd asks the default agent about a keyboard that pairs itself and asks for HID: nobody says yes.
            for request in ["RequestAuthorization", "RequestConfirmation"] {
                #expect(try await s.askDefaultAgent(request, keyboard) != "accepted", "\(request)")
            }
            #expect(try await s.askDefaultAgent("AuthorizeService", keyboard, uuid: "1124") != "accepted")
            // Asked directly (as bluetoothd asks for pairing our own connection starts), the agent refuses the
            // keyboard, and the sensor too while it is not pairing it.
            let path = Self.device(keyboard)
            let rejected = "org.bluez.Error.Rejected"
            #expect(
                try await s.callDaemonAgent("RequestConfirmation", [.objectPath(path), .uint32(123_456)]) == rejected
            )
            #expect(try await s.callDaemonAgent("RequestAuthorization", [.objectPath(path)]) == rejected)
            #expect(
                try await s.callDaemonAgent(
                    "AuthorizeService",
                    [.objectPath(path), .string("00001124-0000-1000-8000-00805f9b34fb")]
                ) == rejected
            )
            #expect(
                try await s.callDaemonAgent("RequestAuthorization", [.objectPath(Self.device(strap))]) == rejected,
                "no pairing is under way"
            )
            // The refusals are in systoled's journal.
            s.daemon.signal(SIGTERM)
            _ = try await s.daemon.waitForExit()
            let errors = await s.daemon.standardError()
            #expect(errors.contains("refused a Bluetooth request"), "\(errors)")
        }
    }

    @Test func earbudsArePairedThroughAWindowAndTheDefaultAgentIsGivenBack() async throws {
        // The real-stack VM's arrangement: the earbuds are played by a second adapter of the same bluetoothd, whose
        // side of the pairing asks the default agent.
        try await withSetup(
            scenario: """
                {"adapters": [{}, {}], "mirrorPairing": true,
                 "sensors": [{"model": "powerbeats-pro-2", "count": 2, "rate": 2}, {"model": "keyboard"}]}
                """
        ) { s in
            // The desktop's agent, the default before systoled starts; it refuses whatever it is asked.
            let desktop = RecordingAgent(path: "/test/desktop_agent")
            (try await s.connection()).export(desktop.object)
            for (method, arguments) in [
                ("RegisterAgent", [DBusValue.objectPath(desktop.object.path), .string("KeyboardDisplay")]),
                ("RequestDefaultAgent", [DBusValue.objectPath(desktop.object.path)]),
            ] {
                _ = try await (try await s.connection()).call(
                    destination: "org.bluez",
                    path: "/org/bluez",
                    interface: "org.bluez.AgentManager1",
                    method: method,
                    arguments: arguments
                )
            }
            try await s.startDaemon()
            // systoled pairs the earbuds it chose on its own (they refuse notifications until paired).
            let sensors = try await s.waitForSensors { $0.first.map(Self.streaming) == true }
            let chosen = try #require(sensors.first?["address"] as? String, "\(sensors)")
            #expect(
                try await s.defaultAgent().owner == (try await s.connection()).uniqueName,
                "the desktop's agent is default again"
            )
            #expect(desktop.requests.isEmpty, "the pairing did not ask the desktop's agent: \(desktop.requests)")

            // And `systole pair` pairs the other earbuds the same way.
            let other = try #require(s.simulator.addresses[0..<2].first { $0 != chosen })
            _ = try await (try await s.connection()).call(
                destination: ControlAPI.busName,
                path: ControlAPI.objectPath,
                interface: ControlAPI.interface,
                method: "Scan",
                arguments: [.double(1)]
            )
            let pair = try await s.systole("pair", other)
            #expect(pair.standardOutput == "Paired with \(other)\n", "\(pair.standardError)")
            #expect(
                try await s.defaultAgent().owner == (try await s.connection()).uniqueName,
                "the desktop's agent is default again"
            )
            #expect(desktop.requests.isEmpty, "\(desktop.requests)")
            // A keyboard asking now reaches the desktop's agent, not systoled's.
            _ = try await s.askDefaultAgent("AuthorizeService", s.simulator.addresses[2], uuid: "1124")
            #expect(desktop.requests.map(\.method) == ["AuthorizeService"])
        }
    }

    // MARK: Pair and Forget

    @Test func pairAndForgetRefuseDevicesThatAreNotSensors() async throws {
        try await withSetup(
            scenario: """
                {"sensors": [{"model": "polar-h10", "rate": 4}, {"model": "keyboard", "paired": true}]}
                """
        ) { s in
            try await s.startDaemon()
            let keyboard = s.simulator.addresses[1]
            for command in ["pair", "forget"] {
                let result = try await s.systole(command, keyboard)
                #expect(result.status == 1, "\(command): \(result.standardOutput)")
                #expect(result.standardError.contains("is not a heart-rate sensor"), "\(result.standardError)")
                #expect(result.standardError.contains("bluetoothctl"), "it says what to use instead")
            }
            // The keyboard is still known and paired to bluetoothd.
            let objects = try await (try await s.connection()).call(
                destination: "org.bluez",
                path: "/",
                interface: "org.freedesktop.DBus.ObjectManager",
                method: "GetManagedObjects"
            )
            let path = Self.device(keyboard)
            let entry = objects.first?.dictionaryEntries?.first { $0.key.string == path }
            let device = entry?.value.dictionaryEntries?.first { $0.key.string == "org.bluez.Device1" }
            #expect(device?.value.propertyMap?["Paired"] == .boolean(true))
        }
    }

    // MARK: Claims

    @Test func twoAnyEntriesTakeTwoDifferentStrapsAndLogEachReadingOnce() async throws {
        try await withSetup(scenario: #"{"sensors": [{"model": "polar-h10", "count": 2, "rate": 4}]}"#) { s in
            try await s.startDaemon(configuration: #"sensors = ["any", "any"]"#)
            let sensors = try await s.waitForSensors { $0.count == 2 && $0.allSatisfy(Self.streaming) }
            let addresses = sensors.compactMap { $0["address"] as? String }
            #expect(sensors.allSatisfy(Self.streaming), "\(sensors)")
            #expect(Set(addresses) == Set(s.simulator.addresses), "\(addresses)")
            // Each notification is logged once: per sensor, no more lines than it sent (the emit log holds what
            // reached a subscriber), after a dozen of each.
            try await waitUntil("a dozen readings of each strap logged") {
                let logged = s.logged()
                return s.simulator.addresses.allSatisfy { address in logged.filter { $0.sensor == address }.count >= 12
                }
            }
            let logged = s.logged()
            let sent = try s.emitted()
            for address in s.simulator.addresses {
                let sentCount = sent.filter { $0.sensor == address }.count
                let loggedCount = logged.filter { $0.sensor == address }.count
                #expect(
                    loggedCount > 0 && loggedCount <= sentCount,
                    "\(address): \(loggedCount) lines, \(sentCount) sent"
                )
            }
        }
    }

    @Test func oneStrapWithTwoAnyEntriesLeavesTheSecondSearching() async throws {
        try await withSetup(scenario: #"{"sensors": [{"model": "polar-h10", "rate": 4}]}"#) { s in
            try await s.startDaemon(configuration: #"sensors = ["any", "any"]"#)
            _ = try await s.waitForSensors { $0.contains(where: Self.streaming) }
            // The second entry searched to its end (its discovery timed out) without taking the strap.
            let sensors = try await s.waitForSensors { sensors in
                sensors.contains { ($0["state"] as? String)?.contains("attempt") == true }
            }
            #expect(sensors.filter(Self.streaming).count == 1, "\(sensors)")
            #expect(sensors.compactMap { $0["address"] as? String } == [s.simulator.addresses[0]], "\(sensors)")
        }
    }

    // MARK: Malformed notifications

    @Test func malformedNotificationsAreCountedShownAndLoggedSparingly() async throws {
        try await withSetup(
            scenario: """
                {"sensors": [{"model": "polar-h10", "rate": 8, "faults": [{"kind": "malformed", "at": 0, "every": 4}]}]}
                """
        ) { s in
            try await s.startDaemon()
            let sensors = try await s.waitForSensors { ($0.first?["malformed"] as? Int ?? 0) >= 5 }
            let counted = try #require(sensors.first?["malformed"] as? Int, "\(sensors)")
            let sent = try s.emitted().filter { $0.object["malformed"] as? Bool ?? false }.count
            #expect(counted >= 5 && counted <= sent, "\(counted) counted, \(sent) sent")
            let text = try await s.systole("sensors")
            #expect(
                text.standardOutput.contains("rejected: ") && text.standardOutput.contains(" malformed"),
                "\(text.standardOutput)"
            )
            // The journal has the first at once and no line per notification.
            s.daemon.signal(SIGTERM)
            _ = try await s.daemon.waitForExit()
            let lines = await s.daemon.standardError().split(separator: "\n").filter { $0.contains("malformed") }
            #expect(lines.count == 1, "\(lines)")
            // Its length and what is wrong, not its bytes: a cut-short notification of an honest strap can hold its
            // heart rate, and the journal is read by more than group systole.
            #expect(
                lines.allSatisfy { $0.contains(#/skipped a malformed notification of [0-9]+ bytes: /#) },
                "\(lines)"
            )
        }
    }
}

/// An agent of the test's own (a desktop's, say): refuses everything and records what it was asked.
final class RecordingAgent: Sendable {
    let object: DBusObject
    private let recorded = Mutex<[(method: String, device: String)]>([])

    var requests: [(method: String, device: String)] { recorded.withLock { $0 } }

    init(path: String) {
        object = DBusObject(path: path)
        var methods: [DBusMethod] = []
        for (name, inputs) in [
            ("RequestConfirmation", [("device", DBusType.objectPath), ("passkey", .uint32)]),
            ("RequestAuthorization", [("device", .objectPath)]),
            ("AuthorizeService", [("device", .objectPath), ("uuid", .string)]),
        ] {
            methods.append(
                DBusMethod(name, inputs: inputs) { [weak self] call throws(DBusError) in
                    self?.recorded.withLock { $0.append((name, call.arguments.first?.string ?? "")) }
                    throw DBusError(name: "org.bluez.Error.Rejected", message: "the desktop's user said no")
                }
            )
        }
        methods.append(DBusMethod("Release") { _ in [] })
        methods.append(DBusMethod("Cancel") { _ in [] })
        object.addInterface(DBusInterface("org.bluez.Agent1", methods: methods))
    }
}

extension DaemonHarness {
    /// Waits until `systole sensors --json` satisfies `condition`; returns the last answer.
    fileprivate func waitForSensors(_ condition: ([[String: Any]]) -> Bool) async throws -> [[String: Any]] {
        var sensors: [[String: Any]] = []
        _ = try await eventually(every: .milliseconds(250)) {
            sensors = try await self.sensors()
            return condition(sensors)
        }
        return sensors
    }

    /// The simulated bluetoothd's default agent: (unique name, path), empty when there is none.
    fileprivate func defaultAgent() async throws -> (owner: String, path: String) {
        let reply = try await simulatorCall("DefaultAgent", [])
        return (reply[0].string ?? "", reply[1].string ?? "")
    }

    /// Makes the simulated bluetoothd ask the default agent; returns "accepted" or the refusal.
    fileprivate func askDefaultAgent(_ request: String, _ address: String, uuid: String = "") async throws -> String {
        try await simulatorCall("AskDefaultAgent", [.string(request), .string(address), .string(uuid)])[0]
            .string ?? ""
    }

    fileprivate func simulatorCall(_ method: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await connection().call(
            destination: "org.systole.Simulator",
            path: "/org/systole/Simulator",
            interface: "org.systole.Simulator1",
            method: method,
            arguments: arguments
        )
    }

    /// Calls systoled's pairing agent directly, as bluetoothd would.
    fileprivate func callDaemonAgent(_ method: String, _ arguments: [DBusValue]) async throws -> String {
        let connection = try await connection()
        let owner = try #require(try await connection.nameOwner(of: ControlAPI.busName))
        do {
            _ = try await connection.call(
                destination: owner,
                path: "/org/systole/agent",
                interface: "org.bluez.Agent1",
                method: method,
                arguments: arguments
            )
            return "accepted"
        } catch {
            return error.name
        }
    }

    /// The live log's reading lines: time and sensor address.
    fileprivate func logged() -> [(time: Double, sensor: String)] {
        let text = (try? String(contentsOfFile: daemon.liveLogPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 2, let date = try? Date(String(fields[0]), strategy: .iso8601) else { return nil }
            return (date.timeIntervalSince1970, String(fields[1]))
        }
    }
}
