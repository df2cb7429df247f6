import DBus
import Foundation
import HeartRateProfile
import SystoleTestSupport
import Testing

@testable import BlueZSimulator

#if canImport(Glibc)
import Glibc
#endif

/// Hostile devices as a D-Bus client sees them: names byte for byte, storms beside an honest strap, flapping links.
@Suite struct HostileDeviceBusTests {
    typealias Fixture = SimulatorBusTests.Fixture

    func withSimulator(
        _ scenario: Scenario,
        emitLog: String? = nil,
        _ body: (Fixture) async throws -> Void
    ) async throws {
        let bus = try await PrivateBus.start()
        let client = try await DBusConnection.connect(to: .address(bus.address))
        let simulator = try BlueZSimulator(
            scenario: scenario,
            bus: .address(bus.address),
            emitLogPath: emitLog,
            recordEmissions: true
        )
        try await simulator.start()
        defer {
            client.close()
            bus.stop()
        }
        try await body(Fixture(bus: bus, simulator: simulator, client: client))
        await simulator.stop()
    }

    func utf8(_ value: DBusValue?) -> [UInt8]? { value?.string.map { Array($0.utf8) } }

    /// Connects the paired sensor `index` and starts notifications from it.
    func connectAndNotify(_ f: Fixture, _ index: Int) async throws -> String {
        let path = await f.devicePath(index)
        _ = try await f.call(path, "org.bluez.Device1", "Connect")
        try await f.waitForServices(path)
        _ = try await f.call(path + "/service000a/char000b", "org.bluez.GattCharacteristic1", "StartNotify")
        return path
    }

    @Test func hostileNamesReachDBusByteForByte() async throws {
        let name = "\u{1B}]0;owned\u{07}\u{1B}[2J\u{1B}[H\rPolar H10 0000AAAA\n\u{08}\u{7F}\u{9B}31m e\u{301}"
        let gapName = "\u{1B}[31m" + String(repeating: "A", count: 10_000) + "\n"
        let alias = "\u{1B}[5mhci\u{07}"
        var scenario = Scenario()
        scenario.adapters[0].alias = alias
        scenario.sensors[0].name = name
        scenario.sensors[0].gapName = gapName
        scenario.sensors[0].paired = true
        try await withSimulator(scenario) { f in
            let path = await f.devicePath()
            var device = try #require(try await f.objects()[path]?["org.bluez.Device1"])
            #expect(utf8(device["Name"]) == Array(name.utf8))
            #expect(utf8(device["Alias"]) == Array(name.utf8))
            let got = try await f.call(
                path,
                "org.freedesktop.DBus.Properties",
                "Get",
                [.string("org.bluez.Device1"), .string("Name")]
            )
            #expect(utf8(got.first?.unwrapped) == Array(name.utf8))
            let adapter = try await f.objects()["/org/bluez/hci0"]?["org.bluez.Adapter1"]
            #expect(utf8(adapter?["Alias"]) == Array(alias.utf8))

            // The GAP Device Name, read when services resolve, becomes Name and Alias, 10 000 characters and all.
            _ = try await f.call(path, "org.bluez.Device1", "Connect")
            try await f.waitForServices(path)
            device = try #require(try await f.objects()[path]?["org.bluez.Device1"])
            #expect(utf8(device["Name"]) == Array(gapName.utf8))
            #expect(utf8(device["Alias"]) == Array(gapName.utf8))
        }
    }

    /// Issue 23's storm beside an honest strap: the stormer's notifications go out at their rate (about 1000 a
    /// second, 7 s) with 255 RR intervals each, every one in the emit log, and the honest strap's keep coming between
    /// them, none held back until the storm is over. The storm starts once both are subscribed; its grid is fixed, so
    /// a busy machine plays every notification of it, later.
    @Test func aStormDoesNotHoldUpAnHonestStrapBesideIt() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("emit-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        var scenario = Scenario()
        var honest = Scenario.SensorSpec(model: .polarH10)
        honest.paired = true
        var stormer = Scenario.SensorSpec(model: .polarH10)
        stormer.paired = true
        // bluetoothd's largest ATT MTU, so that 255 intervals fit a notification.
        stormer.mtu = 517
        scenario.sensors = [honest, stormer]
        let fixture = self
        let played = scenario
        try await withTimeout(.seconds(180), "the storm") {
            try await fixture.withSimulator(played, emitLog: log) { f in
                _ = try await fixture.connectAndNotify(f, 0)
                _ = try await fixture.connectAndNotify(f, 1)
                let storm = try await f.simulator.play(Scenario.FaultSpec(.storm, at: 0, for: 7), sensor: 1)
                let before = Self.cpuSeconds()
                let started = ContinuousClock.now
                let addresses = await f.simulator.sensorAddresses
                // Every notification of the storm's grid, and the honest strap's next one after it.
                try await waitUntil("the storm's 7000 notifications and an honest one after them") {
                    let emitted = await f.simulator.emittedNotifications()
                    let stormed = emitted.filter { $0.sensor == addresses[1] && $0.payload.count > 20 }
                    guard stormed.count >= 7000, let last = stormed.last?.date else { return false }
                    return emitted.contains { $0.sensor == addresses[0] && $0.date > last }
                }
                let cpu = (Self.cpuSeconds() - before) / (ContinuousClock.now - started).seconds
                // Stopped first, so that the log and the record hold the same notifications.
                await f.simulator.stop()
                let emitted = await f.simulator.emittedNotifications()
                let stormed = emitted.filter { $0.sensor == addresses[1] && $0.payload.count > 20 }
                let span = try #require(stormed.last?.date).timeIntervalSince(try #require(stormed.first?.date))
                let during = emitted.filter {
                    $0.sensor == addresses[0] && $0.date > stormed[0].date && $0.date < stormed[stormed.count - 1].date
                }
                let honestTimes = emitted.filter { $0.sensor == addresses[0] }.map(\.date.timeIntervalSince1970)
                let deviation = zip(honestTimes, honestTimes.dropFirst()).map { abs($1 - $0 - 1) }.max() ?? 0
                print(
                    "storm beside an honest strap: \(stormed.count) storm notifications over \(span) s "
                        + "(\(Int(Double(stormed.count - 1) / span))/s); honest strap \(during.count) notifications "
                        + "during it, gaps max deviation from 1 s \(Int(deviation * 1_000_000)) µs; CPU of the test "
                        + "process (simulator and client) \(Int(cpu * 100)) % of a core"
                )
                #expect(stormed.count == Int(storm.for * 1000), "the storm's grid, every notification of it")
                // The honest strap's notifications keep coming while the storm plays: one a second, give or take
                // the first and last of the span (a storm that held the simulator up would leave none).
                #expect(during.count >= Int(min(span, storm.for)) - 2, "\(during.count) in \(span) s")
                for entry in stormed {
                    let measurement = try HeartRateMeasurement(decoding: entry.payload)
                    #expect(measurement.rrIntervals.count == 255 && !measurement.isTruncated)
                }
                let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
                #expect(lines.count == emitted.count, "the emit log has every notification sent")
            }
        }
    }

    /// A device flapping its link 20 times a second for 2 s: with a `GattProfile1` registered, bluetoothd's
    /// auto-connect takes it back each time, so clients see the link come and go each of the 40 times, and end
    /// connected.
    @Test func aFlappingDeviceDropsAndComesBackAtItsRate() async throws {
        var scenario = Scenario()
        scenario.sensors[0].paired = true
        let fixture = self
        let played = scenario
        try await withTimeout(.seconds(120), "the flapping") {
            try await fixture.withSimulator(played) { f in
                let path = await f.devicePath()
                let changes = try await f.propertyChanges(of: path)
                let profile = DBusObject(path: "/app/hr")
                profile.addInterface(
                    DBusInterface("org.bluez.GattProfile1", properties: [DBusProperty("UUIDs", .array(.string))]),
                    values: ["UUIDs": .strings(["0000180d-0000-1000-8000-00805f9b34fb"])]
                )
                f.client.addObjectManager(at: "/app")
                f.client.export(profile)
                _ = try await f.call(
                    "/org/bluez/hci0",
                    "org.bluez.GattManager1",
                    "RegisterApplication",
                    [.objectPath("/app"), .propertyMap([:])]
                )
                var connected = changes.compactMap { $0.arguments[1].propertyMap?["Connected"]?.bool }
                    .makeAsyncIterator()
                // The auto-connect takes the device as soon as the profile is registered.
                while try await connected.next() != true {}
                try await f.simulator.play(Scenario.FaultSpec(.flap, at: 0, for: 2), sensor: 0)
                try await waitUntil("the flap window played to its end") { await f.simulator.flapsPlayed == 1 }
                let drops = await f.simulator.flapDrops
                var seen: [Bool] = []
                while seen.filter({ !$0 }).count < drops || seen.last != true {
                    guard let next = try await connected.next() else { break }
                    seen.append(next)
                }
                print("flap at 20/s for 2 s: \(drops) link drops, \(seen.filter { !$0 }.count) seen")
                #expect(drops == 40, "a drop each period of the window")
                #expect(seen == Array(repeating: [false, true], count: drops).flatMap { $0 }, "each drop and return")
                #expect(try await f.objects()[path]?["org.bluez.Device1"]?["Connected"] == .boolean(true))
            }
        }
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// A device claiming the honest strap's address: one object for the address, as in bluetoothd, taking the name of
/// whichever advertised last, and a Connect() reaching that one.
@Suite struct ImpostorBusTests {
    @Test func anImpostorSharesTheAddressAndTakesTheConnectionWhenItAdvertisedLast() async throws {
        var scenario = Scenario()
        var honest = Scenario.SensorSpec(model: .polarH10)
        honest.address = Scenario.honestStrapAddress
        honest.name = "Polar H10 0000AAAA"
        var impostor = honest
        impostor.name = "Polar H10 0000AAAA (impostor)"
        var impossible = Scenario.FaultSpec(.impossibleHeartRate, at: 0, for: 600)
        impossible.bpm = 400
        impostor.faults = [impossible]
        impostor.rate = 4
        scenario.sensors = [honest, impostor]
        try await HostileDeviceBusTests().withSimulator(scenario) { f in
            let path = await f.devicePath(0)
            #expect(path == (await f.devicePath(1)))
            let changes = try await f.propertyChanges(of: path)
            var names = changes.compactMap { $0.arguments[1].propertyMap?["Name"]?.string }.makeAsyncIterator()
            _ = try await f.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
            try await f.waitForDevice(path)
            // The device appears with the honest name; the impostor's advertisement renames it.
            #expect(try await names.next() == "Polar H10 0000AAAA (impostor)")
            _ = try await f.call("/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery")
            _ = try await f.call(path, "org.bluez.Device1", "Connect")
            try await f.waitForServices(path)
            _ = try await f.call(path + "/service000a/char000b", "org.bluez.GattCharacteristic1", "StartNotify")
            let emitted = try await waitFor("three notifications") {
                let emitted = await f.simulator.emittedNotifications()
                return emitted.count >= 3 ? emitted : nil
            }
            #expect(!emitted.isEmpty && emitted.allSatisfy { $0.sensorIndex == 1 })
            #expect(try emitted.allSatisfy { try HeartRateMeasurement(decoding: $0.payload).heartRate == 400 })
        }
    }
}
