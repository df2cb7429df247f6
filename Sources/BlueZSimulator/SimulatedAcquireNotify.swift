import DBus
import Foundation
import Glibc

/// A notify socket handed out by AcquireNotify: the simulator's end, who holds the other, and the scenario's
/// faults for it.
struct AcquiredSocket: Sendable {
    /// The simulator's end of the socket pair (non-blocking); the client got the other.
    var fd: Int32
    var client: String
    /// When it was acquired, in simulator seconds.
    var since: Double
    /// Notifications still to drop, as bluetoothd drops those a sensor sends before the subscription is confirmed.
    var dropsLeft: Int
}

/// How a simulated sensor's AcquireNotify behaves (`acquire` in a scenario's sensor).
public struct AcquireSpec: Codable, Sendable, Equatable {
    /// False: bluetoothd without AcquireNotify (the method is unknown).
    public var offered = true
    /// The first notifications after each acquire that never reach the socket.
    public var dropFirst = 0
    /// Seconds after each acquire at which the socket breaks while the link stays up; nil: never.
    public var breakAfter: Double?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let r = try DefaultingReader(decoder, allowed: ["offered", "dropFirst", "breakAfter"])
        try r.read("offered", into: &offered)
        try r.read("dropFirst", into: &dropFirst)
        try r.read("breakAfter", into: &breakAfter)
    }
}

extension BlueZSimulator {
    /// AcquireNotify as bluetoothd 5.66 answers it: "Not connected" without a link, NotPermitted "Notify acquired"
    /// while any client holds the socket, InProgress while StartNotify sessions exist, NotSupported without the
    /// notify flag; otherwise a `SOCK_SEQPACKET` socket (one datagram per notification) and the MTU, with
    /// `NotifyAcquired` true. Only 0x2A37 is played.
    func acquireNotify(
        _ path: String,
        _ kind: Characteristic,
        client: String,
        flags: [String]
    ) throws(DBusError)
        -> [DBusValue]
    {
        let device = try connectedDevice(path)
        let spec = sensors[device.sensor].spec.acquire
        guard spec.offered else {
            throw DBusError(.unknownMethod, "Method \"AcquireNotify\" with signature \"a{sv}\" doesn't exist")
        }
        guard flags.contains("notify"), kind == .measurement else { throw SimError.notSupported }
        releaseIfHungUp(path)
        guard devices[path]?.acquired == nil else { throw SimError.make("NotPermitted", "Notify acquired") }
        guard device.heartRateSessions.isEmpty else { throw SimError.make("InProgress", "In Progress") }
        if sensors[device.sensor].requiresPairing, !device.paired {
            throw SimError.make("NotPermitted", "Not paired")
        }
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw SimError.failed("socketpair: \(String(cString: strerror(errno)))")
        }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        devices[path]?.acquired = AcquiredSocket(fd: fds[0], client: client, since: now, dropsLeft: spec.dropFirst)
        devices[path]?.notifyingSince = now
        device.gatt?.measurement.setProperty(Self.characteristicInterface, "NotifyAcquired", .boolean(true))
        // The reply takes a copy of the client's end; the binding closes this one once it has.
        return [.unixFD(fds[1]), .uint16(UInt16(sensors[device.sensor].spec.effectiveMTU))]
    }

    /// Closes the device's notify socket (the client sees a hang-up) and clears `NotifyAcquired`.
    func releaseAcquired(_ path: String) {
        guard let acquired = devices[path]?.acquired else { return }
        close(acquired.fd)
        devices[path]?.acquired = nil
        devices[path]?.gatt?.measurement.setProperty(Self.characteristicInterface, "NotifyAcquired", .boolean(false))
    }

    /// bluetoothd notices at once when the client closes its end; here it is noticed when the socket is next used.
    func releaseIfHungUp(_ path: String) {
        guard let acquired = devices[path]?.acquired else { return }
        var probe = pollfd(fd: acquired.fd, events: Int16(POLLOUT), revents: 0)
        if poll(&probe, 1, 0) > 0, probe.revents & Int16(POLLHUP | POLLERR) != 0 { releaseAcquired(path) }
    }

    /// Sends one notification over the acquired socket; false when it did not get there (dropped, broken, full).
    func sendAcquired(_ path: String, _ payload: [UInt8]) -> Bool {
        guard var acquired = devices[path]?.acquired, let sensor = devices[path]?.sensor else { return false }
        if let breakAfter = sensors[sensor].spec.acquire.breakAfter, now - acquired.since >= breakAfter {
            releaseAcquired(path)
            return false
        }
        if acquired.dropsLeft > 0 {
            acquired.dropsLeft -= 1
            devices[path]?.acquired = acquired
            return false
        }
        let sent = payload.withUnsafeBytes {
            send(acquired.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
        if sent < 0, errno == EPIPE || errno == ECONNRESET { releaseAcquired(path) }
        return sent == payload.count
    }
}
