import DBus
import Foundation

extension GattCharacteristic {
    /// Takes the characteristic's notifications over a socket (`AcquireNotify`) instead of the message bus: each
    /// notification is one datagram, read on the connection's loop thread beside the bus and handed to `onValue` as
    /// ``notifications(routesValues:onValue:)`` hands a signal's value, so a consumer cannot tell the two apart.
    ///
    /// While this session holds the characteristic, bluetoothd refuses StartNotify and AcquireNotify to every
    /// client (`NotPermitted`, "Notify acquired"), and does not update `Value`. The session ends, and
    /// ``GattNotifySession/ended()`` throws, when the socket hangs up or fails (``AcquiredNotificationsEnded``; the
    /// device disconnected, or the socket broke while it stayed connected: the caller tells which), when the device
    /// reports a disconnect or bluetoothd stops (``BlueZError`` with kind `notConnected`). Cancelling the task
    /// waiting in `ended()` closes the socket, which is how bluetoothd is told to release it; StopNotify is never
    /// sent (bluetoothd 5.66 may touch freed memory when it is, after a failed acquire).
    ///
    /// - Parameter timeout: how long bluetoothd may take to answer (it answers once the sensor acknowledged the
    ///   subscription; bluetoothd 5.66 never answers when the sensor refuses it).
    /// - Parameter onReadComplete: as ``notifications(routesValues:onValue:onReadComplete:)``'s: once after the
    ///   last datagram of each read of the socket.
    public func acquireNotifications(
        timeout: Duration = .seconds(10),
        onValue: @escaping @Sendable (GattNotification) -> Void,
        onReadComplete: @escaping @Sendable () -> Void = {}
    ) async throws(BlueZError) -> GattNotifySession {
        let (stream, continuation) = AsyncThrowingStream<GattNotification, any Error>.makeStream()
        let path = path
        let devicePath = path.range(of: "/service").map { String(path[..<$0.lowerBound]) } ?? path
        let client = client
        let reply = try await client.connection.callBlueZ(
            path,
            BlueZ.Interface.gattCharacteristic,
            "AcquireNotify",
            [.propertyMap([:])],
            timeout: timeout
        )
        guard reply.count == 2, case .unixFD(let fd) = reply[0], case .uint16 = reply[1] else {
            for fd in reply.flatMap(\.unixFDs) { close(fd) }
            throw BlueZError(.failed, "AcquireNotify on \(path) answered \(reply.map(\.type)), not (h fd, q mtu)")
        }
        let sink = addSessionSink(devicePath: devicePath, ending: continuation)
        let source = NotificationSocket.read(fd, on: client.connection) { bytes, receivedAt in
            onValue(GattNotification(value: Array(bytes), receivedAt: receivedAt, receivedDate: Date()))
        } onReadComplete: {
            onReadComplete()
        } onEnd: { end in
            switch end {
            case .hungUp: continuation.finish(throwing: AcquiredNotificationsEnded(end: "hung up"))
            case .failed(let reason):
                continuation.finish(throwing: AcquiredNotificationsEnded(end: "failed: \(reason)"))
            case .closed: continuation.finish()
            case .connectionClosed:
                continuation.finish(throwing: BlueZError(.disconnected, "the bus connection closed"))
            }
        }
        continuation.onTermination = { _ in
            client.removeSink(sink)
            NotificationSocket.close(source, on: client.connection)
        }
        // Closing the socket is the stop: bluetoothd has nothing to answer.
        return GattNotifySession(base: stream, ending: NotifyEnding(stopNotify: {}, finish: { continuation.finish() }))
    }
}
