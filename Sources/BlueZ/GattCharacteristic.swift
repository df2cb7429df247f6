import DBus
import Foundation
import HeartRateProfile
import Synchronization

/// A GATT characteristic of a connected device (`org.bluez.GattCharacteristic1`).
public struct GattCharacteristic: Sendable, Hashable {
    public let client: BlueZClient
    /// The object path, `…/dev_…/service000c/char000d`.
    public let path: String

    public init(client: BlueZClient, path: String) {
        self.client = client
        self.path = path
    }

    public static func == (lhs: GattCharacteristic, rhs: GattCharacteristic) -> Bool {
        lhs.path == rhs.path && lhs.client === rhs.client
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }

    private func value(_ name: String) -> DBusValue? {
        client.property(path, BlueZ.Interface.gattCharacteristic, name)
    }

    public var uuid: BluetoothUUID? { value("UUID")?.string.flatMap(BluetoothUUID.init) }
    /// `read`, `write`, `notify`, … as BlueZ lists them.
    public var flags: [String] { value("Flags")?.strings ?? [] }
    public var isNotifying: Bool { value("Notifying")?.bool ?? false }
    /// The link's ATT MTU as bluetoothd negotiated it (a value holds at most `mtu - 3` bytes); nil before BlueZ 5.62.
    public var mtu: Int? { value("MTU")?.int64.map(Int.init) }
    /// The last value bluetoothd announced, as this client caches it; the values of a notify session this client
    /// holds open go to the session instead and leave this as it was.
    public var cachedValue: [UInt8]? { value("Value")?.bytes }

    /// Reads the value from the device.
    public func readValue() async throws(BlueZError) -> [UInt8] {
        let reply = try await client.connection.callBlueZ(
            path,
            BlueZ.Interface.gattCharacteristic,
            "ReadValue",
            [.propertyMap([:])]
        )
        guard let bytes = reply.first?.bytes else {
            throw BlueZError(.failed, "ReadValue on \(path) returned \(reply), not bytes")
        }
        return bytes
    }

    /// How a write is sent.
    public enum WriteType: String, Sendable {
        /// Acknowledged by the device (ATT Write Request); errors such as "ATT error: 0x80" come back.
        case request
        /// Unacknowledged (ATT Write Command).
        case command
    }

    /// Writes `bytes` to the device.
    public func writeValue(_ bytes: [UInt8], type: WriteType = .request) async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(
            path,
            BlueZ.Interface.gattCharacteristic,
            "WriteValue",
            [.bytes(bytes), .propertyMap(["type": .string(type.rawValue)])]
        )
    }

    /// Starts a notify session (`StartNotify`) whose values go to `onValue` as they arrive: in order, on the
    /// connection's loop thread, read on the bus's fast path (keep `onValue` short; never block in it).
    ///
    /// The handler is in place before `StartNotify` is sent, so the first notification is never lost. The
    /// session ends, and ``GattNotifySession/ended()`` throws ``BlueZError`` with kind `notConnected`, when the
    /// device disconnects (BlueZ keeps the GATT objects and the session, but this one ends: start a new one after
    /// reconnecting), when the characteristic disappears, or when bluetoothd stops. The session is stopped
    /// (`StopNotify`) when the task waiting in `ended()` is cancelled. bluetoothd keeps one session per bus
    /// connection: a second session on the same connection shares it, and stopping either ends it.
    ///
    /// With `routesValues` false the caller has routed this characteristic's `Value` signals itself
    /// (``routeValues(of:on:to:onReadComplete:)``), and only the rare signal that changes more than the value reaches
    /// `onValue` from here. A caller does that to keep the values coming between sessions: bluetoothd resumes a
    /// session by itself when the link comes back, before the caller has subscribed again.
    ///
    /// `onReadComplete` runs on the loop thread once after the last value of each read of the bus (SwiftNIO's
    /// `channelReadComplete`): the time to hand on together what one read brought.
    public func notifications(
        routesValues: Bool = true,
        onValue: @escaping @Sendable (GattNotification) -> Void,
        onReadComplete: @escaping @Sendable () -> Void = {}
    ) async throws(BlueZError) -> GattNotifySession {
        let (stream, continuation) = AsyncThrowingStream<GattNotification, any Error>.makeStream()
        return try await notifications(
            stream,
            continuation,
            routesValues: routesValues,
            deliver: onValue,
            readComplete: onReadComplete
        )
    }

    private func notifications(
        _ stream: AsyncThrowingStream<GattNotification, any Error>,
        _ continuation: AsyncThrowingStream<GattNotification, any Error>.Continuation,
        routesValues: Bool,
        deliver: @escaping @Sendable (GattNotification) -> Void,
        readComplete: @escaping @Sendable () -> Void
    ) async throws(BlueZError) -> GattNotifySession {
        let path = path
        let devicePath = path.range(of: "/service").map { String(path[..<$0.lowerBound]) } ?? path
        let sink = addSessionSink(devicePath: devicePath, ending: continuation) { change in
            guard change.path == path, change.interface == BlueZ.Interface.gattCharacteristic,
                let bytes = change.changed["Value"]?.bytes
            else { return }
            // A value that came with other properties is a read of its own.
            deliver(GattNotification(value: bytes, receivedAt: change.receivedAt, receivedDate: change.receivedDate))
            readComplete()
        }
        // The usual signal, a Value alone, is read straight from the message; the sink above takes any other
        // (bluetoothd may report Notifying in the same signal as a first value).
        let route =
            routesValues
            ? Self.routeValues(of: path, on: client.connection, to: deliver, onReadComplete: readComplete) : nil
        let client = client
        do {
            _ = try await client.connection.callBlueZ(path, BlueZ.Interface.gattCharacteristic, "StartNotify")
        } catch {
            client.removeSink(sink)
            if let route { client.connection.removeRoute(route) }
            continuation.finish()
            throw error
        }
        let ending = NotifyEnding(
            stopNotify: {
                _ = try? await client.connection.callBlueZ(path, BlueZ.Interface.gattCharacteristic, "StopNotify")
            },
            finish: { continuation.finish() }
        )
        continuation.onTermination = { termination in
            client.removeSink(sink)
            if let route { client.connection.removeRoute(route) }
            // Only a consumer that stopped listening ends the session; a vanished characteristic has none left.
            guard case .cancelled = termination else { return }
            Task { await ending.end() }
        }
        return GattNotifySession(base: stream, ending: ending)
    }
}

extension GattCharacteristic {
    /// Watches what ends a notify session, either way it travels: the device disconnecting (BlueZ keeps the GATT
    /// objects when the link drops, so the device's own properties say it went), the characteristic going away,
    /// bluetoothd stopping or restarting; each finishes `continuation` with a ``BlueZError`` of kind `notConnected`.
    /// Other changes under the device go to `otherChange`.
    func addSessionSink(
        devicePath: String,
        ending continuation: AsyncThrowingStream<GattNotification, any Error>.Continuation,
        otherChange: @escaping @Sendable (PropertiesChange) -> Void = { _ in }
    ) -> UInt64 {
        let path = path
        return client.addSink(pathPrefix: devicePath) { event in
            switch event {
            case .propertiesChanged(let change) where change.path == devicePath:
                if change.changed["ServicesResolved"]?.bool == false || change.changed["Connected"]?.bool == false {
                    continuation.finish(throwing: BlueZError(.notConnected, "\(devicePath) disconnected"))
                }
            case .propertiesChanged(let change):
                otherChange(change)
            case .interfacesRemoved(let removed, let interfaces):
                if removed == path, interfaces.contains(BlueZ.Interface.gattCharacteristic) {
                    continuation.finish(throwing: BlueZError(.notConnected, "\(path) went away (disconnected)"))
                }
            case .serviceStopped, .serviceStarted:
                continuation.finish(throwing: BlueZError(.notConnected, "bluetoothd restarted; the session ended"))
            case .interfacesAdded:
                return
            }
        }
    }

    /// Hands each `Value` signal bluetoothd sends for the characteristic at `path` to `deliver`, read in place on
    /// the bus's fast path (``ValueChange``), until the route is removed, and `onReadComplete` once after the last
    /// value of each read of the bus. Only bluetoothd's signals count: anyone may send one on a system bus. A signal
    /// that says more than the value alone takes the general path, to the client's sinks.
    public static func routeValues(
        of path: String,
        on connection: DBusConnection,
        to deliver: @escaping @Sendable (GattNotification) -> Void,
        onReadComplete: @escaping @Sendable () -> Void = {}
    ) -> DBusSignalRoute {
        connection.routeSignals(
            path: path,
            interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged",
            sender: BlueZ.service,
            to: { message, receivedAt in
                ValueChange.read(message, interface: characteristicInterface, property: valueProperty) { bytes in
                    deliver(GattNotification(value: Array(bytes), receivedAt: receivedAt, receivedDate: Date()))
                }
            },
            onReadComplete: onReadComplete
        )
    }

    private static let characteristicInterface = ContiguousArray(BlueZ.Interface.gattCharacteristic.utf8CString)
    private static let valueProperty = ContiguousArray("Value".utf8CString)
}

/// One notification (or indication) of a characteristic value.
public struct GattNotification: Sendable, Hashable {
    public var value: [UInt8]
    /// Monotonic receive time.
    public var receivedAt: ContinuousClock.Instant
    /// Wall-clock receive time.
    public var receivedDate: Date

    public init(value: [UInt8], receivedAt: ContinuousClock.Instant, receivedDate: Date) {
        self.value = value
        self.receivedAt = receivedAt
        self.receivedDate = receivedDate
    }
}

/// One StartNotify session; its values go to the handler it was started with.
public struct GattNotifySession: Sendable {
    /// Carries no values: it only ends, or throws, when the session does.
    let base: AsyncThrowingStream<GattNotification, any Error>
    let ending: NotifyEnding

    /// Ends the session and returns once bluetoothd has answered (StopNotify; for AcquireNotify, the socket
    /// closed): a session started after this returns is not ended by this one's stop arriving late.
    public func stop() async { await ending.end() }

    /// Returns when the session ends; throws ``BlueZError`` (kind `notConnected`) when it ended underneath (a
    /// disconnect, the characteristic gone, bluetoothd stopped). Cancelling the waiting task stops the session. Wait
    /// from one task.
    public func ended() async throws {
        for try await _ in base {}
    }
}

/// The end of a notify session from our side, done once: by ``GattNotifySession/stop()`` (awaited) or when the
/// consumer stops listening.
final class NotifyEnding: Sendable {
    private let done = Mutex(false)
    private let stopNotify: @Sendable () async -> Void
    private let finish: @Sendable () -> Void

    init(stopNotify: @escaping @Sendable () async -> Void, finish: @escaping @Sendable () -> Void) {
        self.stopNotify = stopNotify
        self.finish = finish
    }

    func end() async {
        let first = done.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        await stopNotify()
        finish()
    }
}
