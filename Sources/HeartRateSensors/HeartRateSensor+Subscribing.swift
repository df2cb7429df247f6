import BlueZ
import DBus
import Foundation
import HeartRateProfile

/// Subscribing to 0x2A37: AcquireNotify or StartNotify, pairing when the sensor asks for it, falling back from one
/// path to the other, and the notifications that arrive before streaming begins.
extension HeartRateSensor {
    /// Subscribes to 0x2A37 by `method` (``SensorConnection`` decides which, and what follows a refusal). Each
    /// notification is handled as it arrives, on the connection's loop thread (no task of our own to wake per
    /// notification), and so is the end of each read; the session only says when it ends.
    func subscribe(
        _ measurement: GattCharacteristic,
        _ method: NotifyMethod,
        fallbackReason: String?,
        asked: ContinuousClock.Instant,
        onValue: @escaping @Sendable (GattNotification) -> Void
    ) async throws(BlueZError) -> NotifySubscription {
        subscribed(try await open(measurement, method, onValue), method, reason: fallbackReason, asked: asked)
    }

    /// What ``SensorConnection`` needs to know of a refusal to decide what follows it.
    static func refusal(_ error: BlueZError, of device: BluetoothDevice) -> SensorConnection.Refusal {
        let cause: SensorConnection.Refusal.Cause =
            if isHeldByAnother(error) {
                .heldByAnother
            } else if [BlueZError.Kind.notPermitted, .notAuthorized, .authenticationFailed].contains(error.kind) {
                .needsPairing
            } else if error.kind == .timeout {
                .noAnswer
            } else if error.kind == .unknownObject {
                .notOffered
            } else {
                .other
            }
        return SensorConnection.Refusal(
            cause: cause,
            description: "\(error)",
            deviceIsConnected: device.isConnected,
            deviceIsPaired: device.isPaired
        )
    }

    private static func isHeldByAnother(_ error: BlueZError) -> Bool {
        error.kind == .notPermitted && error.message.contains("Notify acquired")
    }

    private func open(
        _ measurement: GattCharacteristic,
        _ method: NotifyMethod,
        _ onValue: @escaping @Sendable (GattNotification) -> Void
    ) async throws(BlueZError) -> GattNotifySession {
        switch method {
        case .acquire:
            try await measurement.acquireNotifications(
                timeout: options.acquireTimeout,
                onValue: onValue,
                onReadComplete: readCompleteHandler()
            )
        case .signal: try await startNotify(measurement, onValue)
        }
    }

    /// StartNotify, with the values arriving through this sensor's standing route (``SharedState/standingRoute``).
    private func startNotify(
        _ measurement: GattCharacteristic,
        _ onValue: @escaping @Sendable (GattNotification) -> Void
    ) async throws(BlueZError) -> GattNotifySession {
        keepRouting(measurement)
        let onReadComplete = readCompleteHandler()
        state.withLock { shared in
            shared.onValue = onValue
            shared.onReadComplete = onReadComplete
        }
        do {
            return try await measurement.notifications(
                routesValues: false,
                onValue: onValue,
                onReadComplete: onReadComplete
            )
        } catch {
            state.withLock { shared in
                shared.onValue = nil
                shared.onReadComplete = nil
            }
            throw error
        }
    }

    /// Routes `measurement`'s values to this sensor until it stops (a route already there for its path is kept).
    private func keepRouting(_ measurement: GattCharacteristic) {
        // Only this sensor's session task calls this, so nothing changes the route between the check and the swap.
        guard state.withLock({ $0.standingRoute?.path }) != measurement.path else { return }
        let connection = client.connection
        let route = GattCharacteristic.routeValues(
            of: measurement.path,
            on: connection,
            to: { [weak self] notification in self?.takeRouted(notification) },
            onReadComplete: { [weak self] in self?.routedReadComplete() }
        )
        let replaced = state.withLock { shared in
            defer { shared.standingRoute = (measurement.path, route) }
            return shared.standingRoute?.route
        }
        if let replaced { connection.removeRoute(replaced) }
    }

    /// The most notifications kept between sessions: five minutes of a 4 Hz sensor.
    private static let resumedLimit = 1200

    /// A routed value: to the session's handler, or, between sessions, kept for the next one.
    private func takeRouted(_ notification: GattNotification) {
        let deliver = state.withLock { shared -> (@Sendable (GattNotification) -> Void)? in
            if let onValue = shared.onValue { return onValue }
            if shared.early.count < Self.resumedLimit { shared.early.append(notification) }
            return nil
        }
        deliver?(notification)
    }

    /// The end of a read of routed values: to the session's handler; between sessions the values wait, and are
    /// reported with a read of their own when the next session begins.
    private func routedReadComplete() {
        state.withLock { $0.onReadComplete }?()
    }

    /// A subscription and the path it takes.
    struct NotifySubscription {
        var session: GattNotifySession
        var method: NotifyMethod
        /// When the subscription was asked for: no notification of it was sent before.
        var asked: ContinuousClock.Instant
    }

    private func subscribed(
        _ session: GattNotifySession,
        _ method: NotifyMethod,
        reason: String?,
        asked: ContinuousClock.Instant
    ) -> NotifySubscription {
        emit(.notifying(method, reason: method == .signal ? reason : nil))
        return NotifySubscription(session: session, method: method, asked: asked)
    }

    /// StartNotify after an acquired socket was closed: bluetoothd releases it when it notices the hang-up, so for a
    /// moment it may still refuse with "Notify acquired".
    func subscribeAfterRelease(
        _ measurement: GattCharacteristic,
        _ device: BluetoothDevice,
        address: BluetoothAddress,
        fallbackReason: String?
    ) async throws -> NotifySubscription {
        let asked = ContinuousClock.now
        let onValue = notificationHandler(address: address, device: device)
        var attempt = 0
        while true {
            attempt += 1
            do {
                return subscribed(
                    try await startNotify(measurement, onValue),
                    .signal,
                    reason: fallbackReason,
                    asked: asked
                )
            } catch {
                guard attempt < 20, error.kind == .notPermitted || error.kind == .inProgress else { throw error }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// What the end of each read goes to: the delegate, always, even when the read's notifications were held for
    /// streaming to begin (a delegate that finds nothing new has nothing to hand on) or the session ended meanwhile
    /// (the read's readings must not wait for another read to go on).
    func readCompleteHandler() -> @Sendable () -> Void {
        { [weak self] in self?.completeRead() }
    }

    /// What each notification goes to: held until streaming begins, then handled as it arrives.
    func notificationHandler(
        address: BluetoothAddress,
        device: BluetoothDevice
    ) -> @Sendable (GattNotification) -> Void {
        // Not emptied: notifications that bluetoothd's resumed session brought since the link came back wait there.
        state.withLock { $0.handlesNotifications = false }
        return { [weak self] notification in
            guard let self else { return }
            let now = self.state.withLock { shared -> Bool in
                if !shared.handlesNotifications { shared.early.append(notification) }
                return shared.handlesNotifications
            }
            if now { self.handle(notification, address: address, device: device) }
        }
    }

    /// Handles the notifications that arrived before streaming began, then lets later ones be handled as they
    /// arrive. Any arriving meanwhile wait their turn, so the order is kept.
    func startHandlingNotifications(address: BluetoothAddress, device: BluetoothDevice) {
        var handled = false
        while true {
            let waiting = state.withLock { shared -> [GattNotification] in
                if shared.early.isEmpty { shared.handlesNotifications = true }
                defer { shared.early = [] }
                return shared.early
            }
            if waiting.isEmpty { break }
            for notification in waiting { handle(notification, address: address, device: device) }
            handled = true
        }
        // They were one read, reported now.
        if handled { completeRead() }
    }
}
