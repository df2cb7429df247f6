import Foundation
import Glibc

/// Tells systemd how the service is doing (sd_notify), written by hand so systoled needs no libsystemd: each
/// message is one datagram to the Unix socket named by `$NOTIFY_SOCKET` (a path, or `@name` for an abstract
/// socket). Without `$NOTIFY_SOCKET` (not run by systemd) every call does nothing.
public struct SystemdNotifier: Sendable {
    /// The socket address, nil when not run by systemd.
    public let socketPath: String?
    /// Half of `$WATCHDOG_USEC`, when systemd expects keep-alives (and `$WATCHDOG_PID` is ours or unset).
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if forUs, let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 {
            // Half of systemd's, as sd_watchdog_enabled(3) advises; never under 50 ms, so a tiny WATCHDOG_USEC
            // cannot make the daemon spin sending keep-alives.
            watchdogInterval = max(.microseconds(Int64(clamping: usec / 2)), Self.shortestWatchdogInterval)
        } else {
            watchdogInterval = nil
        }
    }

    /// The least time between two keep-alives, whatever `WATCHDOG_USEC` says.
    static let shortestWatchdogInterval: Duration = .milliseconds(50)

    /// Why a notification could not be sent.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Sends `state` (e.g. `READY=1`, `STATUS=…`). Lines are separated by newlines.
    public func notify(_ state: String) throws(Failure) {
        guard let socketPath else { return }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket(): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        // An abstract socket's name starts with a NUL byte where systemd writes '@'.
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { throw Failure(description: "NOTIFY_SOCKET is too long: \(socketPath)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), socketAddress, length)
            }
        }
        guard sent == bytes.count else {
            // A listener that stops reading fills its queue; waiting for it would stall the thread that sends.
            if errno == EAGAIN || errno == EWOULDBLOCK {
                throw Failure(
                    description: "\(socketPath) is not being read (is systemd's manager stalled?): the message was "
                        + "dropped, and systoled goes on without it"
                )
            }
            throw Failure(description: "sending to \(socketPath) failed: \(String(cString: strerror(errno)))")
        }
    }
}
