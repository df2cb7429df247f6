import BlueZ
import BlueZSimulator
import Foundation
import PolarMeasurementData
import Synchronization
import SystoleTestSupport
import Testing

@testable import HeartRateSensors

/// Polar's Measurement Data beside the heart rate, against the simulated H10: started when asked for, frames as
/// the strap sent them placed on the host's clock, refusals that leave the heart rate alone, hostile frames, a
/// dropout.
@Suite struct PMDSensorTests {
    static func h10(_ configure: (inout PMDSpec) -> Void = { _ in }) -> Scenario {
        scenario(.polarH10, rate: 2) { spec in
            var pmd = PMDSpec()
            configure(&pmd)
            spec.pmd = pmd
        }
    }

    func sensor(_ bt: SimulatedBluetooth, accelerometer: Bool = false, agent: PairingAgent? = nil) -> HeartRateSensor {
        var options = fastOptions()
        options.agent = agent
        options.pmd = PMDOptions(ecg: true, accelerometer: accelerometer ? .init(rate: 50, range: 8) : nil)
        let sensor = HeartRateSensor(
            client: bt.client,
            target: .anyHeartRateSensor,
            options: options,
            delegate: HeartRateSensorEventStream()
        )
        sensor.measurePMD(true)
        return sensor
    }

    @Test func ecgAndTheAccelerometerStreamBesideTheHeartRateAsTheStrapSentThem() async throws {
        try await withSimulator(Self.h10 { $0.rate = 129.5 }) { bt in
            let sensor = sensor(bt, accelerometer: true)
            let events = await collect(sensor) { events in
                events.ecg.count >= 8 && events.acceleration.count >= 4 && events.readings.count >= 3
            }
            #expect(events.contains(.pmd(.started(.ecg))) && events.contains(.pmd(.started(.acceleration))))
            // An honest strap's frames and answers are all taken (the features read is no indication).
            #expect(!events.contains { if case .pmd(.frameRejected) = $0 { true } else { false } })
            let ecg = events.ecg
            #expect(ecg.first?.segmentBreak == .start)
            #expect(ecg.dropFirst().allSatisfy { $0.segmentBreak == nil })
            // Exactly what the strap sent, in order.
            let sent = await bt.simulator.emittedNotifications().filter { $0.characteristic == .pmdData }
            let sentECG = try sent.map { try PMDFrame(decoding: $0.payload) }.filter { $0.type == .ecg }
            #expect(ecg.map(\.samples) == (try sentECG.prefix(ecg.count).map { try $0.samples() }))
            // The rate comes from the strap's timestamps once two frames have arrived.
            for reading in ecg.dropFirst() { #expect(abs(reading.rate - 129.5) < 0.5, "\(reading.rate) Hz") }
            // Each frame follows the one before it on the host's clock.
            for (previous, next) in zip(ecg, ecg.dropFirst()) {
                let end = previous.firstSample + previous.interval * 73
                #expect(abs((next.firstSample - end) / .milliseconds(1)) < 30)
            }
            #expect(events.acceleration.allSatisfy { $0.samples.count == 36 })
        }
    }

    @Test func turnedOffItStopsTheStrapAndTurnedOnItStartsAgain() async throws {
        try await withSimulator(Self.h10()) { bt in
            let sensor = sensor(bt)
            let events = await collect(sensor) { events in
                let stopped = events.filter { $0 == .pmd(.stopped(.ecg, reason: "no longer asked for")) }.count
                let started = events.filter { $0 == .pmd(.started(.ecg)) }.count
                if events.ecg.count >= 2, stopped == 0, sensor.measuresPMD {
                    sensor.measurePMD(false)
                }
                if stopped == 1, started == 1, !sensor.measuresPMD {
                    #expect(await bt.simulator.pmdStreamsRunning(sensor: 0) == 0)
                    sensor.measurePMD(true)
                }
                return events.filter { $0 == .pmd(.started(.ecg)) }.count == 2 && events.ecg.count >= 4
            }
            #expect(events.filter { $0 == .pmd(.started(.ecg)) }.count == 2)
            // The restarted stream is a segment of its own.
            #expect(events.ecg.filter { $0.segmentBreak == .start }.count == 2)
        }
    }

    /// Off and straight on again (a workout ending as the next one starts): the new session is not silenced by the
    /// old one's StopNotify arriving after its StartNotify.
    @Test func offAndStraightOnAgainTheECGKeepsComing() async throws {
        try await withSimulator(Self.h10()) { bt in
            let sensor = sensor(bt)
            let toggled = Atomic(false)
            let events = await collect(sensor) { events in
                if events.ecg.count >= 2,
                    toggled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
                {
                    sensor.measurePMD(false)
                    sensor.measurePMD(true)
                }
                let restarted = events.filter { $0 == .pmd(.started(.ecg)) }.count >= 2
                return restarted && events.ecg.filter { $0.segmentBreak == .start }.count >= 2
                    && events.ecg.count >= 6
            }
            #expect(events.filter { $0 == .pmd(.started(.ecg)) }.count == 2, "\(events.states)")
            #expect(events.ecg.count >= 6)
        }
    }

    /// bluetoothd 5.66 can leave `Connected` false on a link it made (seen after a strap was removed and found
    /// again): the ECG starts all the same, and at its end the strap is told to stop, the link being up.
    @Test func withoutConnectedAnnouncedTheECGStartsAndIsStopped() async throws {
        var quiet = Self.h10()
        quiet.quietConnected = true
        try await withSimulator(quiet) { bt in
            let sensor = sensor(bt)
            let events = await collect(sensor) { events in
                if events.ecg.count >= 2, sensor.measuresPMD { sensor.measurePMD(false) }
                return events.contains { if case .pmd(.stopped) = $0 { true } else { false } }
            }
            #expect(events.contains(.pmd(.started(.ecg))))
            #expect(events.contains(.pmd(.stopped(.ecg, reason: "no longer asked for"))), "\(events.states)")
            #expect(await bt.simulator.pmdStreamsRunning(sensor: 0) == 0)
        }
    }

    @Test func aRefusalIsExplainedAndTheHeartRateGoesOn() async throws {
        try await withSimulator(Self.h10 { $0.refuseECG = 13 }) { bt in
            let sensor = sensor(bt)
            let events = await collect(sensor) { events in
                guard let refused = events.firstIndex(of: .pmd(.refused(.ecg, reason: "the strap is in its charger")))
                else { return false }
                return events[refused...].filter { if case .reading = $0 { true } else { false } }.count >= 3
            }
            #expect(events.contains(.pmd(.refused(.ecg, reason: "the strap is in its charger"))))
            #expect(events.ecg.isEmpty)
        }
    }

    @Test func aStrapThatWantsPairingForPMDIsPairedThroughTheAgent() async throws {
        try await withSimulator(Self.h10 { $0.requiresPairing = true }) { bt in
            let agent = PairingAgent()
            try await agent.register(with: bt.client)
            let sensor = sensor(bt, agent: agent)
            let events = await collect(sensor) { $0.ecg.count >= 2 }
            #expect(events.contains(.pmd(.started(.ecg))))
            #expect(events.ecg.count >= 2)
        }
    }

    @Test func hostileAndRepeatedFramesAreCountedAndTheRestKept() async throws {
        try await withSimulator(
            Self.h10 {
                $0.hostileEvery = 3
                $0.duplicateEvery = 4
            }
        ) { bt in
            let sensor = sensor(bt)
            let events = await collect(sensor) { events in
                events.ecg.count >= 10 && events.contains(.pmd(.duplicateFrame))
            }
            let rejections = events.compactMap { event -> String? in
                if case .pmd(.frameRejected(let reason)) = event { reason } else { nil }
            }
            #expect(!rejections.isEmpty)
            // Every frame kept is whole: 73 samples.
            #expect(events.ecg.allSatisfy { $0.samples.count == 73 })
        }
    }

    /// A strap that floods: ECG at 1000 Hz in frames of 3 samples (a link of the LE minimum MTU), over 300 frames a
    /// second. At most 60 a second (120 at once) are taken, the rest refused and reported at most once a second,
    /// and the heart rate goes on.
    @Test func aFloodOfFramesIsCutToSixtyASecondReportedOnceASecondAndTheHeartRateGoesOn() async throws {
        let flood = scenario(.polarH10, rate: 2) { spec in
            var pmd = PMDSpec()
            pmd.rate = 1000
            spec.pmd = pmd
            spec.mtu = 23
        }
        try await withSimulator(flood) { bt in
            let sensor = sensor(bt)
            let started = ContinuousClock.now
            let events = await collect(sensor) { events in
                events.filter { if case .pmd(.frameRejected) = $0 { true } else { false } }.count >= 3
                    && events.readings.count >= 4
            }
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            let rejections = events.compactMap { event -> String? in
                if case .pmd(.frameRejected(let reason)) = event { reason } else { nil }
            }
            let sent = await bt.simulator.emittedNotifications().filter { $0.characteristic == .pmdData }.count
            #expect(sent > 2 * events.ecg.count, "\(sent) frames sent, \(events.ecg.count) taken")
            // The rate bound, or the timeline's (more samples than the time since the last frame holds), whichever a
            // burst meets first on a busy machine.
            #expect(!rejections.isEmpty)
            #expect(Double(events.ecg.count) <= 120 + 60 * seconds + 60, "\(events.ecg.count) in \(seconds) s")
            #expect(Double(rejections.count) <= seconds + 2, "\(rejections.count) reports in \(seconds) s")
            #expect(events.readings.count >= 4)
        }
    }

    @Test func afterADropoutTheECGStartsAgainWithTheReconnect() async throws {
        try await withSimulator(Self.h10()) { bt in
            let sensor = sensor(bt)
            let once = Once()
            let events = await collect(sensor) { events in
                if events.ecg.count == 3, await once.first() {
                    await bt.simulator.takeOutOfRange(sensor: 0, for: .milliseconds(500))
                }
                return events.filter { $0 == .pmd(.started(.ecg)) }.count == 2 && events.ecg.count >= 6
            }
            #expect(events.contains(.pmd(.stopped(.ecg, reason: "the link went"))))
            let starts = events.ecg.indices.filter { events.ecg[$0].segmentBreak == .start }
            #expect(starts.count == 2 && starts[0] == 0)
        }
    }
}

extension [HeartRateSensorEvent] {
    var pmdReadings: [PMDReading] {
        compactMap { if case .pmdReading(let reading) = $0 { reading } else { nil } }
    }
    var ecg: [PMDReading] {
        pmdReadings.filter { if case .ecg = $0.samples { true } else { false } }
    }
    var acceleration: [PMDReading] {
        pmdReadings.filter { if case .acceleration = $0.samples { true } else { false } }
    }
    func contains(_ event: HeartRateSensorEvent) -> Bool { firstIndex(of: event) != nil }
    func firstIndex(of event: HeartRateSensorEvent) -> Int? {
        firstIndex { if case .pmd(let pmd) = $0, case .pmd(let wanted) = event { pmd == wanted } else { false } }
    }
}

extension HeartRateSensorEvent {
    static func == (lhs: HeartRateSensorEvent, rhs: HeartRateSensorEvent) -> Bool {
        if case .pmd(let left) = lhs, case .pmd(let right) = rhs { return left == right }
        return false
    }
}
