import BlueZ
import Testing

@testable import HeartRateSensors

/// `SensorConnection` alone, no bus: the order of the steps, the way notifications are asked for and the fallback
/// from AcquireNotify, pairing once, and the backoff between attempts.
@Suite struct SensorConnectionTests {
    let strap = try! BluetoothAddress("A0:9E:1A:00:00:01")
    let earbuds = try! BluetoothAddress("DC:2C:26:00:00:01")

    func machine(generation: Int = 1, pairs: Bool = true) -> SensorConnection {
        SensorConnection(
            initialReconnectDelay: .seconds(1),
            maximumReconnectDelay: .seconds(30),
            pairsWhenRequired: pairs,
            generation: generation
        )
    }

    func refusal(
        _ cause: SensorConnection.Refusal.Cause,
        connected: Bool = true,
        paired: Bool = false
    ) -> SensorConnection.Refusal {
        SensorConnection.Refusal(
            cause: cause,
            description: "org.bluez.Error.\(cause)",
            deviceIsConnected: connected,
            deviceIsPaired: paired
        )
    }

    /// Drives a machine from the start to streaming by `wanted`, the device connecting on its own or not.
    func streaming(_ connection: inout SensorConnection, _ address: BluetoothAddress, wanted: NotifyMethod) {
        if connection.state == .idle { #expect(connection.start() == .find) }
        #expect(connection.found(address, isConnected: false) == .connect(address))
        #expect(connection.connected() == .resolveServices)
        guard case .subscribe(let method, _) = connection.servicesResolved(wanted: wanted) else {
            Issue.record("no subscribe after services resolved")
            return
        }
        #expect(connection.subscribed() == .stream(firstOfConnection: true))
        #expect(connection.state == .streaming(address, method: method))
    }

    @Test func aConnectionGoesFromFindingToStreamingInOrder() {
        var connection = machine()
        #expect(connection.start() == .find)
        #expect(connection.state == .finding)
        #expect(connection.found(strap, isConnected: false) == .connect(strap))
        #expect(connection.connected() == .resolveServices)
        #expect(connection.servicesResolved(wanted: .signal) == .subscribe(.signal, fallbackReason: nil))
        #expect(connection.subscribed() == .stream(firstOfConnection: true))
        #expect(connection.state == .streaming(strap, method: .signal))
    }

    @Test func aDeviceBluetoothdAlreadyConnectedSkipsConnecting() {
        var connection = machine()
        _ = connection.start()
        #expect(connection.found(strap, isConnected: true) == .resolveServices)
    }

    @Test func failedAttemptsBackOffDoublingUpToTheCap() {
        var connection = machine()
        _ = connection.start()
        var delays: [Duration] = []
        for attempt in 1...7 {
            let action = connection.failed("no sensor", generation: 1)
            guard case .reconnect(let reason, let number, let delay, let endsSubscription) = action else {
                Issue.record("\(action)")
                return
            }
            #expect(reason == "no sensor")
            #expect(number == attempt)
            #expect(!endsSubscription, "nothing was subscribed")
            delays.append(delay)
            #expect(connection.waited() == .find)
        }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30].map { Duration.seconds($0) })
    }

    @Test func aConnectionThatStreamedStartsTheBackoffOver() {
        var connection = machine()
        _ = connection.start()
        for _ in 1...3 {
            _ = connection.failed("no sensor", generation: 1)
            _ = connection.waited()
        }
        streaming(&connection, strap, wanted: .signal)
        #expect(
            connection.streamEnded(generation: 1)
                == .reconnect(reason: "the sensor disconnected", attempt: 1, delay: .seconds(1), endsSubscription: true)
        )
    }

    @Test func aNewBluetoothdStartsTheBackoffOver() {
        var connection = machine(generation: 1)
        _ = connection.start()
        for _ in 1...4 {
            _ = connection.failed("no sensor", generation: 1)
            _ = connection.waited()
        }
        #expect(connection.attempt == 4)
        let action = connection.failed("bluetoothd restarted", generation: 2)
        #expect(
            action
                == .reconnect(reason: "bluetoothd restarted", attempt: 1, delay: .seconds(1), endsSubscription: false)
        )
    }

    @Test func aRefusedAcquireFallsBackToStartNotifyAndIsRemembered() {
        var connection = machine()
        _ = connection.start()
        _ = connection.found(strap, isConnected: false)
        _ = connection.connected()
        #expect(connection.servicesResolved(wanted: .acquire) == .subscribe(.acquire, fallbackReason: nil))
        let reason = "bluetoothd does not offer AcquireNotify"
        #expect(
            connection.subscribeRefused(refusal(.notOffered), generation: 1)
                == .subscribe(.signal, fallbackReason: reason)
        )
        #expect(connection.subscribed() == .stream(firstOfConnection: true))
        _ = connection.streamEnded(generation: 1)
        _ = connection.waited()
        _ = connection.found(strap, isConnected: false)
        _ = connection.connected()
        #expect(
            connection.servicesResolved(wanted: .acquire) == .subscribe(.signal, fallbackReason: reason),
            "the device's next connections do not try AcquireNotify"
        )
        #expect(connection.acquireFallbacks == [strap: reason])
    }

    @Test func theFallbackIsKeptPerDevice() {
        var connection = machine()
        _ = connection.start()
        _ = connection.found(strap, isConnected: false)
        _ = connection.connected()
        _ = connection.servicesResolved(wanted: .acquire)
        _ = connection.subscribeRefused(refusal(.noAnswer), generation: 1)
        #expect(connection.acquireFallbacks[strap] == "AcquireNotify got no answer within the time allowed")
        _ = connection.failed("gone", generation: 1)
        _ = connection.waited()
        _ = connection.found(earbuds, isConnected: false)
        _ = connection.connected()
        #expect(connection.servicesResolved(wanted: .acquire) == .subscribe(.acquire, fallbackReason: nil))
    }

    @Test func aSensorThatWantsPairingIsPairedOnceAndAskedAgainTheSameWay() {
        var connection = machine()
        _ = connection.start()
        _ = connection.found(earbuds, isConnected: false)
        _ = connection.connected()
        _ = connection.servicesResolved(wanted: .acquire)
        #expect(connection.subscribeRefused(refusal(.needsPairing), generation: 1) == .pair)
        #expect(connection.state == .pairing(earbuds, method: .acquire))
        #expect(connection.paired() == .subscribe(.acquire, fallbackReason: nil))
        // Refused again after pairing: StartNotify, not a second pairing.
        let action = connection.subscribeRefused(refusal(.needsPairing), generation: 1)
        #expect(
            action
                == .subscribe(
                    .signal,
                    fallbackReason: "AcquireNotify was refused after pairing: org.bluez.Error.needsPairing"
                )
        )
        guard case .reconnect = connection.subscribeRefused(refusal(.needsPairing), generation: 1) else {
            Issue.record("StartNotify refused after pairing and the fallback must give the attempt up")
            return
        }
    }

    @Test func pairingIsLeftAloneWhenTheOptionsSayNoOrTheDeviceIsPaired() {
        for (pairs, paired) in [(false, false), (true, true)] {
            var connection = machine(pairs: pairs)
            _ = connection.start()
            _ = connection.found(earbuds, isConnected: false)
            _ = connection.connected()
            _ = connection.servicesResolved(wanted: .signal)
            let action = connection.subscribeRefused(refusal(.needsPairing, paired: paired), generation: 1)
            #expect(
                action
                    == .reconnect(
                        reason: "org.bluez.Error.needsPairing",
                        attempt: 1,
                        delay: .seconds(1),
                        endsSubscription: false
                    )
            )
        }
    }

    @Test func notificationsHeldByAnotherClientSayWhoAndHowToFreeThem() {
        var connection = machine()
        _ = connection.start()
        _ = connection.found(strap, isConnected: false)
        _ = connection.connected()
        _ = connection.servicesResolved(wanted: .acquire)
        // AcquireNotify refused because another holds it: StartNotify is tried, and refused the same way.
        #expect(connection.subscribeRefused(refusal(.heldByAnother), generation: 1).isSubscribe(.signal))
        let action = connection.subscribeRefused(refusal(.heldByAnother), generation: 1)
        guard case .reconnect(let reason, _, _, _) = action else {
            Issue.record("\(action)")
            return
        }
        #expect(reason == SensorConnection.heldByAnother)
        #expect(reason.contains("another program holds"))
    }

    @Test func aDisconnectedDeviceDoesNotFallBack() {
        var connection = machine()
        _ = connection.start()
        _ = connection.found(strap, isConnected: false)
        _ = connection.connected()
        _ = connection.servicesResolved(wanted: .acquire)
        guard case .reconnect = connection.subscribeRefused(refusal(.other, connected: false), generation: 1) else {
            Issue.record("a refusal from a device that went away ends the attempt")
            return
        }
        #expect(connection.acquireFallbacks.isEmpty)
    }

    @Test func aBrokenAcquiredSocketMovesTheSameConnectionToStartNotify() {
        var connection = machine()
        streaming(&connection, strap, wanted: .acquire)
        let reason = "the notification socket hung up while the sensor stayed connected"
        #expect(connection.acquiredPathFailed(reason) == .subscribeAfterRelease(fallbackReason: reason))
        #expect(connection.subscribed() == .stream(firstOfConnection: false), "the same connection goes on")
        #expect(connection.state == .streaming(strap, method: .signal))
        #expect(connection.acquireFallbacks[strap] == reason)
    }

    @Test func cancellingStopsFromAnyState() {
        var connection = machine()
        streaming(&connection, strap, wanted: .signal)
        #expect(connection.cancelled() == .stop)
        #expect(connection.state == .stopped)
        #expect(connection.failed("late", generation: 1) == .stop, "a stopped machine stays stopped")
    }
}

extension SensorConnection.Action {
    func isSubscribe(_ method: NotifyMethod) -> Bool {
        if case .subscribe(method, _) = self { true } else { false }
    }
}
