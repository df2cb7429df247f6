import BlueZ
import BlueZSimulator
import DBus
import Foundation
import Synchronization
import SystoleTestSupport
import Testing

/// AcquireNotify as the client takes it and the simulator plays bluetoothd 5.66: every value over the socket and
/// none as a signal, exclusivity both ways, `NotifyAcquired`, the socket hanging up with the link, and released
/// when the client closes it.
@Suite struct AcquireNotifyTests {
    @Test func everyValueComesOverTheSocketAndTheCharacteristicIsHeldExclusively() async throws {
        try await withSimulator(scenario(.polarH10, rate: 20)) { bt in
            let (device, measurement) = try await bt.connectedMeasurement()
            let received = Mutex<[[UInt8]]>([])
            let session = try await measurement.acquireNotifications { notification in
                received.withLock { $0.append(notification.value) }
            }
            #expect(
                await eventually {
                    bt.client.property(measurement.path, BlueZ.Interface.gattCharacteristic, "NotifyAcquired")?.bool
                        == true
                }
            )
            #expect(await eventually { received.withLock { $0.count } >= 10 })

            // Another client of the same bluetoothd: refused both ways while the socket is held.
            let other = try await DBusConnection.connect(to: .address(bt.bus.address))
            defer { other.close() }
            let otherClient = try await BlueZClient.connect(other)
            defer { otherClient.close() }
            let theirs = GattCharacteristic(client: otherClient, path: measurement.path)
            let start = await #expect(throws: BlueZError.self) { _ = try await theirs.notifications { _ in } }
            #expect(start?.kind == .notPermitted && start?.message == "Notify acquired")
            let acquire = await #expect(throws: BlueZError.self) { _ = try await theirs.acquireNotifications { _ in } }
            #expect(acquire?.kind == .notPermitted && acquire?.message == "Notify acquired")
            // Value is left alone: the values went to the socket, not to PropertiesChanged.
            #expect(measurement.cachedValue?.isEmpty ?? true)

            try await device.disconnect()
            await #expect(throws: (any Error).self) { try await session.ended() }
            #expect(
                await eventually {
                    bt.client.property(measurement.path, BlueZ.Interface.gattCharacteristic, "NotifyAcquired")?.bool
                        == false
                }
            )
            let values = received.withLock { $0 }
            let sent = await bt.simulator.emittedNotifications().map(\.payload)
            #expect(values.count >= 10 && values == sent, "\(values.count) received, \(sent.count) sent")
        }
    }

    @Test func closingTheSocketReleasesItAndAStartNotifySessionKeepsItFromBeingAcquired() async throws {
        try await withSimulator(scenario(.polarH10, rate: 20)) { bt in
            let (_, measurement) = try await bt.connectedMeasurement()
            let first = Task { try await measurement.acquireNotifications { _ in }.ended() }
            #expect(
                await eventually {
                    bt.client.property(measurement.path, BlueZ.Interface.gattCharacteristic, "NotifyAcquired")?.bool
                        == true
                }
            )
            // Cancelling closes the socket; bluetoothd notices the hang-up and lets others subscribe again.
            first.cancel()
            _ = await first.result
            var session: GattNotifySession?
            _ = await eventually {
                session = try? await measurement.notifications { _ in }
                return session != nil
            }
            try #require(session != nil, "StartNotify after the socket was closed")
            // While a StartNotify session is open, AcquireNotify is InProgress, as with bluetoothd 5.66.
            let refused = await #expect(throws: BlueZError.self) {
                _ = try await measurement.acquireNotifications { _ in }
            }
            #expect(refused?.kind == .inProgress)
        }
    }
}
