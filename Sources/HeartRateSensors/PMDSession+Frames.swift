import BlueZ
import Foundation
import PolarMeasurementData

/// What the frames of a session have in common: what is running, each one's timeline, and the rate bound.
struct PMDFrameState: Sendable {
    /// The measurements started, by type, with the factor their compressed samples are scaled by.
    var started: [UInt8: Float] = [:]
    var timelines: [UInt8: PMDTimeline] = [:]
    /// At most 60 frames a second, 120 at once: an H10's ECG and accelerometer together send under 8 at its MTU, and
    /// 50 at the smallest MTU. More is a flood.
    var rateGuard: NotificationGuard = {
        var limits = RadioLimits()
        limits.notificationsPerSecond = 60
        limits.notificationBurst = 120
        return NotificationGuard(limits: limits)
    }()
    /// Frames taken, and frames and indications refused, since the session began.
    var received = 0
    var rejected = 0
    /// When a refusal was last reported: a flood of bad frames is reported once a second, not once a frame.
    var lastRejectionReport: ContinuousClock.Instant?
}

extension PMDSession {
    /// The largest ECG a body-surface electrode sees is a few mV; ±100 mV is no heart.
    static let ecgLimit: Int32 = 100_000
    /// An H10's accelerometer reads at most ±8 G; ±16 G is no strap on a person.
    static let accelerationLimit: Int32 = 16_000

    /// One data notification: checked, decoded, placed on the host's clock, reported. On the bus's loop thread.
    func handle(_ notification: GattNotification) {
        var events: [HeartRateSensorEvent] = []
        frames.withLock { state in
            state.received += 1
            switch Self.place(notification, &state, address: address) {
            case .success(let reading):
                events.append(.pmdReading(reading))
            case .failure(.duplicate):
                events.append(.pmd(.duplicateFrame))
            case .failure(.refused(let reason)):
                if let event = Self.refusal(reason, at: notification.receivedAt, &state) { events.append(event) }
            }
        }
        for event in events { report(event) }
    }

    /// One control-point indication: an answer for the command waiting, or a refusal. On the bus's loop thread.
    func handleIndication(_ notification: GattNotification) {
        // bluetoothd announces a value it read as a change of Value too: the features read is no indication.
        guard notification.value.first != PMDFeatures.readOpcode else { return }
        do {
            answers.put(try PMDControlPointMessage(decoding: notification.value))
        } catch {
            let event = frames.withLock { state in
                Self.refusal("a control point indication: \(error)", at: notification.receivedAt, &state)
            }
            if let event { report(event) }
        }
    }

    /// Counts a refusal; reports it at most once a second, so a flood of bad values is not a flood of events.
    private static func refusal(
        _ reason: String,
        at now: ContinuousClock.Instant,
        _ state: inout PMDFrameState
    ) -> HeartRateSensorEvent? {
        state.rejected += 1
        guard state.lastRejectionReport.map({ now - $0 >= .seconds(1) }) ?? true else { return nil }
        state.lastRejectionReport = now
        return .pmd(.frameRejected(reason: "\(reason) (\(state.rejected) refused so far)"))
    }

    enum FrameRefusal: Error {
        case duplicate
        case refused(String)
    }

    private static func place(
        _ notification: GattNotification,
        _ state: inout PMDFrameState,
        address: BluetoothAddress
    ) -> Result<PMDReading, FrameRefusal> {
        guard state.rateGuard.admit(at: notification.receivedAt) else {
            return .failure(.refused("more than 60 PMD frames a second"))
        }
        let frame: PMDFrame
        let samples: PMDSamples
        do {
            frame = try PMDFrame(decoding: notification.value)
            guard let factor = state.started[frame.type.rawValue] else {
                return .failure(.refused("a \(frame.type) frame, which was not started"))
            }
            samples = try frame.samples(factor: factor)
        } catch {
            return .failure(.refused("\(error)"))
        }
        if let outside = outOfRange(samples) { return .failure(.refused(outside)) }
        guard var timeline = state.timelines[frame.type.rawValue] else {
            return .failure(.refused("a \(frame.type) frame, which was not started"))
        }
        let placed = timeline.place(
            sensorTimestamp: frame.sensorTimestamp,
            count: samples.count,
            receivedAt: notification.receivedAt
        )
        state.timelines[frame.type.rawValue] = timeline
        switch placed {
        case .failure(.duplicate):
            return .failure(.duplicate)
        case .failure(.tooManySamples(let rate)):
            return .failure(
                .refused("\(samples.count) samples in the time since the previous frame: \(Int(rate)) a second")
            )
        case .success(let placement):
            let back = notification.receivedAt - placement.firstSample
            let seconds = Double(back.components.seconds) + Double(back.components.attoseconds) / 1e18
            return .success(
                PMDReading(
                    sensor: address,
                    samples: samples,
                    firstSample: placement.firstSample,
                    firstSampleDate: notification.receivedDate.addingTimeInterval(-seconds),
                    interval: placement.interval,
                    segmentBreak: placement.segmentBreak,
                    sensorTimestamp: frame.sensorTimestamp,
                    receivedAt: notification.receivedAt
                )
            )
        }
    }

    private static func outOfRange(_ samples: PMDSamples) -> String? {
        switch samples {
        case .ecg(let values):
            guard let far = values.first(where: { abs($0) > ecgLimit }) else { return nil }
            return "an ECG value of \(far) µV, beyond ±\(ecgLimit / 1000) mV"
        case .acceleration(let values):
            guard let far = values.first(where: { max(abs($0.x), abs($0.y), abs($0.z)) > accelerationLimit }) else {
                return nil
            }
            return "an acceleration of (\(far.x), \(far.y), \(far.z)) mG, beyond ±\(accelerationLimit / 1000) G"
        }
    }
}
