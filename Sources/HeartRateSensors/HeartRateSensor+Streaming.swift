import BlueZ
import DBus
import Foundation
import HeartRateProfile
import Synchronization

/// Streaming: notifications handled as they arrive, the end of the session watched for, silence checked.
extension HeartRateSensor {
    /// failed while the device stayed connected (the caller falls back to StartNotify), or nil.
    func stream(
        _ subscription: NotifySubscription,
        device: BluetoothDevice,
        address: BluetoothAddress,
        deviceEvents: AsyncStream<BlueZEvent>
    ) async throws -> String? {
        let before = state.withLock { shared in
            shared.processor.newConnection(at: .now, listeningSince: subscription.asked)
            return shared.processor.notifications + shared.processor.malformed
        }
        startHandlingNotifications(address: address, device: device)
        defer { state.withLock { $0.handlesNotifications = false } }
        return try await withThrowingTaskGroup(of: String?.self) { group in
            let options = options
            let client = client
            let generation = client.serviceGeneration
            group.addTask {
                // Values are handled as they arrive (see subscribe); this waits for the session to end.
                do {
                    try await subscription.session.ended()
                } catch let ended as AcquiredNotificationsEnded {
                    // The socket hangs up when the device disconnects too; it only counts as broken when the
                    // device still says it is connected a moment later.
                    let deadline = ContinuousClock.now + options.hangUpGrace
                    while ContinuousClock.now < deadline {
                        if !device.isConnected || client.serviceGeneration != generation || !client.isServiceRunning {
                            return nil
                        }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    return "\(ended) while the sensor stayed connected"
                }
                return nil
            }
            if subscription.method == .acquire {
                group.addTask {
                    try await Task.sleep(for: options.acquireFirstValueTimeout)
                    let after = self.state.withLock { $0.processor.notifications + $0.processor.malformed }
                    // Something came: nothing more for this task to do until the session ends.
                    while after > before { try await Task.sleep(for: .seconds(3600)) }
                    return "no notification arrived over AcquireNotify within \(options.acquireFirstValueTimeout)"
                }
            }
            group.addTask {
                // bluetoothd keeps GATT objects when the link drops, so the device's own properties say it went.
                for await event in deviceEvents {
                    switch event {
                    case .propertiesChanged(let change)
                    where change.path == device.path
                        && (change.changed["Connected"]?.bool == false
                            || change.changed["ServicesResolved"]?.bool == false):
                        return nil
                    case .serviceStopped, .serviceStarted:
                        return nil
                    default:
                        continue
                    }
                }
                return nil
            }
            group.addTask {
                await self.watchForSilence()
                return nil
            }
            group.addTask {
                await self.runPMD(device: device, address: address)
                // The connection's end ends the stream, not PMD's: wait for it.
                await WaitableSwitch().wait(until: true)
                return nil
            }
            defer { group.cancelAll() }
            do {
                return try await group.next() ?? nil
            } catch let error as BlueZError where error.kind == .notConnected {
                // The characteristic went away with the connection: a disconnect, not a failure.
                return nil
            }
        }
    }

    func handle(
        _ notification: GattNotification,
        address: BluetoothAddress,
        device: BluetoothDevice
    ) {
        let outcome = state.withLock { $0.processor.process(notification, from: address) }
        if outcome.isResumed { report(.streaming) }
        for event in outcome.events { emit(event) }
        guard outcome.requestsEnergyReset else { return }
        // Looked up when needed: bluetoothd may announce 0x2A39 a moment after 0x2A37, when streaming began.
        guard let controlPoint = device.characteristic(.heartRateControlPoint, in: .heartRateService) else {
            // Not there (yet): the next saturated reading tries again.
            state.withLock { $0.processor.energyResetFailed() }
            return
        }
        // The write waits for bluetoothd; notifications go on being handled meanwhile.
        Task {
            do {
                try await controlPoint.writeValue([HeartRateControlPoint.resetEnergyExpended.rawValue])
                self.emit(.energyExpendedReset)
            } catch {
                self.state.withLock { $0.processor.energyResetFailed() }
            }
        }
    }

    /// Where silence checks fall due: every quarter of a second from the first sensor's start.
    private static let silenceCheckGrid = InstantGrid(step: .milliseconds(250))

    /// Reports the sensor stale when it stays silent for ``Options/staleIntervals`` usual intervals, until
    /// cancelled. Checked on the bus's loop thread when the deadline comes (``DBus/DBusConnection/runOnLoop(at:repeating:)``),
    /// which moves on with every notification: a streaming strap's check costs a wakeup of that thread every few
    /// seconds, or none while other notifications keep it awake.
    private func watchForSilence() async {
        let options = options
        let timer = client.connection.runOnLoop(at: .now) { [weak self] in
            guard let self else { return nil }
            let (becameStale, deadline) = self.state.withLock {
                $0.processor.checkSilence(
                    at: .now,
                    staleIntervals: options.staleIntervals,
                    assumedInterval: options.assumedInterval
                )
            }
            if becameStale { self.report(.stale) }
            // Never sooner than a quarter of a second (a tiny `staleIntervals` must not spin the loop thread), and
            // on a quarter-second grid, so that a hundred sensors' checks fall due together a few times a second
            // instead of each at its own moment.
            return Self.silenceCheckGrid.next(atOrAfter: max(deadline, .now + .milliseconds(250)))
        }
        // Suspends until cancelled: the sensor's task group cancels this when the connection ends.
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        await withTaskCancellationHandler {
            for await _ in stream {}
        } onCancel: {
            continuation.finish()
        }
        timer.cancel()
    }
}
