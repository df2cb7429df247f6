import BlueZ
import BlueZSimulator
import Foundation
import HeartRateProfile
import HeartRateSensors
import Synchronization
import SystoleTestSupport
import Testing

/// `HeartRateSensor` against simulated sensors: decoding, the beat timeline, reconnects, restarts, pairing,
/// malformed payloads, energy reset and stale detection.
@Suite struct HeartRateSensorTests {
    @Test func measurementsAreDecodedExactlyAsTheSimulatorSentThem() async throws {
        try await withSimulator(scenario(.garminHRM, rate: 10)) { bt in
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { $0.readings.count >= 25 }
            let readings = events.readings
            #expect(readings.count >= 25)
            let sent = await bt.simulator.emittedNotifications()
            let decoded = try sent.prefix(readings.count).map { try HeartRateMeasurement(decoding: $0.payload) }
            expectAsSent(events, decoded)
            #expect(readings.allSatisfy { $0.sensor.description == sent[0].sensor })
            // Garmin-like: energy on every 10th notification, RR present, no contact bit.
            let withEnergy = readings.indices.filter { readings[$0].measurement.energyExpended != nil }
            #expect(withEnergy.count >= 2)
            #expect(zip(withEnergy, withEnergy.dropFirst()).allSatisfy { $1 - $0 == 10 })
            #expect(readings.contains { !$0.measurement.rrIntervals.isEmpty })
            #expect(events.contains { if case .bodySensorLocation(.chest) = $0 { true } else { false } })
            #expect(events.contains { if case .batteryLevel = $0 { true } else { false } })
            // Searching and connecting are skipped when bluetoothd already connected it (the auto-connect profile
            // the sensor registered may beat its own Connect()); no attempt failed on the way.
            let start = events.states.prefix(while: { $0 != .streaming })
            #expect(
                start.filter {
                    $0 != .searching(adapters: ["hci0"]) && $0 != .connecting(readings[0].sensor, adapter: "hci0")
                }
                    == [.resolvingServices],
                "\(events.states)"
            )
        }
    }

    /// Checks that `events`' readings are `sent`, field by field. A loaded machine delivers notifications late and in
    /// bursts, so the sensor may leave out beats that add up to more than the time since the previous reading
    /// (reported as rejected excess beats): each reading's RR intervals are the last of those sent, and the ones
    /// kept and the ones left out add up to all that were sent.
    func expectAsSent(
        _ events: [HeartRateSensorEvent],
        _ sent: [HeartRateMeasurement],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let readings = events.readings
        var withoutIntervals = sent
        for index in withoutIntervals.indices { withoutIntervals[index].rrIntervals = [] }
        var received = readings.map(\.measurement)
        for index in received.indices { received[index].rrIntervals = [] }
        #expect(received == withoutIntervals, sourceLocation: sourceLocation)
        let excess = events.reduce(0) { total, event in
            if case .rejected(.excessBeats, let count, _) = event { total + count } else { total }
        }
        for (reading, sentMeasurement) in zip(readings, sent) {
            #expect(
                sentMeasurement.rrIntervals.suffix(reading.measurement.rrIntervals.count)
                    == ArraySlice(reading.measurement.rrIntervals),
                sourceLocation: sourceLocation
            )
        }
        let kept = readings.reduce(0) { $0 + $1.measurement.rrIntervals.count }
        #expect(kept + excess == sent.reduce(0) { $0 + $1.rrIntervals.count }, sourceLocation: sourceLocation)
    }

    @Test func beatsFormOneContinuousTimelineWithinAConnection() async throws {
        try await withSimulator(scenario(.polarH10, rate: 4) { $0.profile.bpm = 180 }) { bt in
            // Stale detection also breaks the timeline; a loaded machine must not trigger it here.
            var options = HeartRateSensor.Options()
            options.staleIntervals = 1_000
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: options,
                delegate: HeartRateSensorEventStream()
            )
            let listening = ContinuousClock.now
            let events = await collect(sensor) { $0.readings.flatMap(\.beats).count >= 15 }
            let readings = events.readings
            #expect(events.streamingConnections == 1, "\(events.states)")
            let first = try #require(readings.firstIndex { !$0.beats.isEmpty })
            #expect(!readings[first].isContinuous, "the first beats of a connection start a segment")
            let beats = readings.flatMap(\.beats)
            #expect(beats.count >= 15)
            let broken = readings[(first + 1)...].firstIndex { !$0.isContinuous }
            #expect(broken == nil, "the timeline broke: \(broken.map { Self.around($0, in: readings) } ?? "")")
            // Each beat its interval after the previous one, or less where the beats were pulled back towards a
            // receipt (the connection's first notification read late): by half an interval at most each time.
            for (previous, beat) in zip(beats, beats.dropFirst()) {
                let spacing = beat.time - previous.time
                #expect(spacing <= beat.interval.duration && spacing >= beat.interval.duration / 2)
            }
            // Back-dated, never later than their notification's receipt by more than a busy machine may have read
            // the connection's first notification late (what later ones may still pull back, and the tolerance): the
            // budget, and the time from listening to the first beats.
            let held = readings[first].receivedAt - listening
            let ahead = BeatTimeline.aheadTolerance + BeatTimeline.pullBackBudget + held
            for reading in readings {
                #expect(reading.beats.allSatisfy { $0.time <= reading.receivedAt + ahead })
                #expect(reading.beats.map(\.interval) == reading.measurement.rrIntervals)
            }
        }
    }

    /// The readings before and at `index`: when each arrived (ms after the first shown), its intervals and beats.
    static func around(_ index: Int, in readings: [HeartRateReading], count: Int = 9) -> String {
        let shown = readings[max(0, index - count + 1)...index]
        let origin = shown.first?.receivedAt ?? .now
        return shown.map { reading in
            let at = (reading.receivedAt - origin).components
            let beats = reading.beats.map { beat in
                let offset = (beat.time - origin).components
                return offset.seconds * 1000 + offset.attoseconds / 1_000_000_000_000_000
            }
            let ms = at.seconds * 1000 + at.attoseconds / 1_000_000_000_000_000
            return "\(ms) ms: rr \(reading.measurement.rrIntervals.map(\.milliseconds)) beats at \(beats)"
        }.joined(separator: "; ")
    }

    @Test func reconnectsAfterADropoutAndMarksTheGap() async throws {
        try await withSimulator(scenario(.polarH10, rate: 5)) { bt in
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: fastOptions(),
                delegate: HeartRateSensorEventStream()
            )
            let simulator = bt.simulator
            let once = Once()
            let events = await collect(sensor) { events in
                if events.readings.count == 5, await once.first() {
                    await simulator.takeOutOfRange(sensor: 0, for: .seconds(1.5))
                }
                return events.streamingConnections >= 2
                    && events.sinceLastConnection.readings.contains { !$0.beats.isEmpty }
            }
            let states = events.states
            #expect(states.contains { if case .disconnected = $0 { true } else { false } })
            #expect(states.contains { if case .waitingToReconnect = $0 { true } else { false } })
            #expect(events.streamingConnections >= 2)
            #expect(sensor.counters.connections >= 2)
            // The first reading with beats after the reconnect starts a new segment.
            let firstWithBeats = events.sinceLastConnection.readings.first { !$0.beats.isEmpty }
            #expect(firstWithBeats?.isContinuous == false)
        }
    }

    @Test func resubscribesAfterBluetoothdRestarts() async throws {
        try await withSimulator(scenario(.wahooTICKR, rate: 10)) { bt in
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: fastOptions(),
                delegate: HeartRateSensorEventStream()
            )
            let simulator = bt.simulator
            let once = Once()
            let events = await collect(sensor) { events in
                if events.readings.count == 5, await once.first() {
                    try? await simulator.restartBluetoothd(downtime: .milliseconds(300))
                }
                return events.streamingConnections >= 2 && events.readings.count >= 15
            }
            #expect(events.streamingConnections == 2)
            #expect(events.readings.count >= 15)
            #expect(sensor.counters.connections == 2)
            // A restarted bluetoothd has forgotten the auto-connect profile: the sensor registered it again.
            #expect(await simulator.registeredApplications == 1)
        }
    }

    /// Attempts pile up while the sensor is away; a restarted bluetoothd starts the backoff from its first step.
    @Test func aRestartedBluetoothdStartsTheBackoffAgain() async throws {
        var away = scenario(.polarH10, rate: 5)
        away.connectTimeout = 0.3
        try await withSimulator(away) { bt in
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: fastOptions(),
                delegate: HeartRateSensorEventStream()
            )
            let simulator = bt.simulator
            let once = Once()
            let restartOnce = Once()
            // How many attempts had been seen when bluetoothd was restarted (on a loaded machine the events may
            // be seen late, after a fifth attempt began).
            let attemptsAtRestart = Atomic(-1)
            let events = await collect(sensor) { events in
                if events.readings.count == 3, await once.first() {
                    await simulator.takeOutOfRange(sensor: 0, for: .seconds(30))
                }
                let attempts = events.states.compactMap {
                    if case .waitingToReconnect(let n, _) = $0 { n } else { nil }
                }
                if attempts.count >= 4, await restartOnce.first() {
                    attemptsAtRestart.store(attempts.count, ordering: .relaxed)
                    try? await simulator.restartBluetoothd(downtime: .milliseconds(200))
                }
                let restartedAt = attemptsAtRestart.load(ordering: .relaxed)
                return restartedAt >= 0 && attempts.dropFirst(restartedAt).contains(1)
            }
            let attempts = events.states.compactMap { if case .waitingToReconnect(let n, _) = $0 { n } else { nil } }
            #expect(Array(attempts.prefix(4)) == [1, 2, 3, 4], "\(events.states)")
            // After the restart the count starts again at 1; at most the attempt already under way is counted on.
            let afterRestart = attempts.dropFirst(attemptsAtRestart.load(ordering: .relaxed))
            #expect(afterRestart.contains(1), "\(events.states)")
            #expect(afterRestart.prefix { $0 != 1 }.count <= 1, "\(events.states)")
        }
    }

    /// What bluetoothd 5.66 does on a first connect: no `Connected: true`, then ServicesResolved with the GAP
    /// name, then the GATT objects a moment later. The sensor waits for 0x2A37 rather than giving up on it.
    @Test func connectsOnTheFirstAttemptWhenTheObjectsFollowServicesResolved() async throws {
        var quirks = scenario(.polarH10, rate: 5) { $0.gapName = "Polar H10 GAP" }
        quirks.quietConnected = true
        try await withSimulator(quirks) { bt in
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: fastOptions(),
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { $0.readings.count >= 3 }
            #expect(events.readings.count >= 3)
            let states = events.states
            let start = states.prefix(while: { $0 != .streaming })
            #expect(
                start.filter {
                    $0 != .searching(adapters: ["hci0"])
                        && $0 != .connecting(events.readings[0].sensor, adapter: "hci0")
                } == [
                    .resolvingServices
                ],
                "\(states)"
            )
            #expect(sensor.counters.connections == 1)
        }
    }

    /// A device whose services resolve without 0x2A37 is refused after the grace, with what to do.
    @Test func aDeviceWithoutTheMeasurementCharacteristicIsNotAHeartRateSensor() async throws {
        try await withSimulator(scenario(.polarH10, rate: 5)) { bt in
            var options = fastOptions()
            options.gattObjectsGrace = .milliseconds(300)
            // Resolved, but the objects never come: bluetoothd lost them (the simulator's database is dropped).
            await bt.simulator.withholdGattObjects()
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: options,
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { events in
                events.states.contains { if case .disconnected = $0 { true } else { false } }
            }
            let reason = events.states.compactMap { if case .disconnected(let r) = $0 { r } else { nil } }.first
            #expect(
                reason?.contains("has no Heart Rate Measurement characteristic (0x2A37)") == true,
                "\(events.states)"
            )
            #expect(events.readings.isEmpty)
        }
    }

    @Test func pairsASensorThatRefusesNotificationsToAnUnpairedHost() async throws {
        try await withSimulator(scenario(.powerbeatsPro2, rate: 5)) { bt in
            let agent = PairingAgent()
            try await agent.register(with: bt.client)
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { $0.readings.count >= 3 }
            #expect(events.states.contains(.pairing))
            #expect(events.readings.count >= 3)
            #expect(events.readings.allSatisfy { $0.measurement.rrIntervals.isEmpty })
            let device = try #require(try await bt.device(0))
            #expect(device.isPaired && device.isBonded)
            #expect(events.contains { if case .bodySensorLocation(.earLobe) = $0 { true } else { false } })
        }
    }

    @Test func withoutPairingTheSensorsRefusalIsReported() async throws {
        try await withSimulator(scenario(.powerbeatsPro2, rate: 5)) { bt in
            var options = fastOptions()
            options.pairsWhenRequired = false
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: options,
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { events in
                events.states.contains { if case .disconnected = $0 { true } else { false } }
            }
            let reason = events.states.compactMap { if case .disconnected(let r) = $0 { r } else { nil } }.first
            #expect(reason == "NotPermitted: Not paired")
            #expect(events.readings.isEmpty)
        }
    }

    @Test func malformedPayloadsAreCountedAndSkipped() async throws {
        let faults = [Scenario.FaultSpec(.malformed, at: 0, every: 4)]
        try await withSimulator(scenario(.polarH10, rate: 20, faults: faults)) { bt in
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: twentyASecond(),
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { $0.readings.count >= 15 }
            let malformed = events.compactMap { if case .malformed(let payload, _) = $0 { payload } else { nil } }
            let sent = await bt.simulator.emittedNotifications()
            let sentMalformed = sent.filter(\.malformed).map(\.payload)
            #expect(malformed.count >= 4)
            #expect(Array(sentMalformed.prefix(malformed.count)) == malformed)
            #expect(sensor.counters.malformed == malformed.count)
            let good = try sent.filter { !$0.malformed }.prefix(events.readings.count).map {
                try HeartRateMeasurement(decoding: $0.payload)
            }
            expectAsSent(events, good)
        }
    }

    @Test func saturatedEnergyIsResetThroughTheControlPoint() async throws {
        try await withSimulator(scenario(.garminHRM, rate: 20) { $0.energyStart = 65_534 }) { bt in
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: twentyASecond(),
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { events in
                events.contains { if case .energyExpendedReset = $0 { true } else { false } }
                    && events.readings.last?.measurement.energyExpended.map { $0 < 100 } == true
            }
            let energies = events.readings.compactMap(\.measurement.energyExpended)
            #expect(energies.contains(65_535))
            #expect(energies.last.map { $0 < 100 } == true, "the sensor counts from zero again")
            #expect(events.filter { if case .energyExpendedReset = $0 { true } else { false } }.count == 1)
        }
    }

    @Test func aSilentSensorIsReportedStaleAndTheGapIsMarked() async throws {
        try await withSimulator(scenario(.polarH10, rate: 5)) { bt in
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                delegate: HeartRateSensorEventStream()
            )
            let simulator = bt.simulator
            let once = Once()
            let events = await collect(sensor) { events in
                if events.readings.count == 8, await once.first(at: events.count) {
                    await simulator.dropNotifications(sensor: 0, for: .seconds(10))
                }
                // Ten readings with beats after the silence: after the first stale report once notifications were
                // dropped (a busy machine may report the sensor stale before, or again later).
                let dropped = await once.index.map { Array(events.dropFirst($0)) } ?? []
                return dropped.afterFirstStale.readings.filter { !$0.beats.isEmpty }.count >= 10
            }
            let sent = await simulator.emittedNotifications().map(\.date)
            let received = events.readings.map(\.receivedDate)
            func longest(_ dates: [Date]) -> Double {
                zip(dates, dates.dropFirst()).map { $1.timeIntervalSince($0) }.max() ?? 0
            }
            let seen =
                "sent \(longest(sent)) s apart at most, received \(longest(received)) s (\(received.count) readings)"
            #expect(events.states.contains(.stale), "no silence seen: \(seen)")
            // Ten seconds of beats lost (more than a busy machine that read the last notifications before it late can
            // hide): the timeline breaks once the sensor is heard at its pace again (the first notifications after a
            // silence may as well be ones a busy machine read late).
            let dropped = await once.index.map { Array(events.dropFirst($0)) } ?? []
            let resumed = dropped.afterFirstStale.readings.filter { !$0.beats.isEmpty }
            let readings = events.readings
            let last = readings.lastIndex { $0.receivedAt == resumed.last?.receivedAt } ?? 0
            #expect(
                resumed.contains { !$0.isContinuous },
                "beats lost in the silence break the timeline: \(Self.around(last, in: readings, count: 60))"
            )
            #expect(sensor.counters.gaps >= 1)
        }
    }

    @Test func aSensorThatIsNotThereIsReportedNotFound() async throws {
        try await withSimulator(scenario(.polarH10)) { bt in
            var options = fastOptions()
            options.discoveryTimeout = .milliseconds(600)
            let missing = try BluetoothAddress("00:11:22:33:44:55")
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .address(missing),
                options: options,
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { events in
                events.states.contains { if case .disconnected = $0 { true } else { false } }
            }
            #expect(events.states.first == .searching(adapters: ["hci0"]))
            let reason = events.states.compactMap { if case .disconnected(let r) = $0 { r } else { nil } }.first
            #expect(reason?.contains("no sensor matching 00:11:22:33:44:55 found") == true)
        }
    }
}

/// Lets a test trigger a fault exactly once.
actor Once {
    private var done = false
    /// How many events there were when `first(at:)` first said yes.
    private(set) var index: Int?
    func first(at count: Int? = nil) -> Bool {
        defer { done = true }
        if !done { index = count }
        return !done
    }
}

/// Options for a simulated sensor notifying twenty times a second, which makes a quick test: above the rate bound
/// (`RadioLimits`), which is not what those tests are about.
func twentyASecond() -> HeartRateSensor.Options {
    var options = HeartRateSensor.Options()
    options.limits.notificationsPerSecond = 100
    options.limits.notificationBurst = 200
    return options
}
