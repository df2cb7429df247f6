import Foundation
import Glibc
import Testing

@testable import Daemon

/// sd_notify by hand: datagrams to $NOTIFY_SOCKET, a path or an abstract name, as systemd listens.
@Suite struct SystemdNotifierTests {
    /// A datagram socket bound where systemd's would be; `name` starting with "@" is abstract.
    final class Listener {
        let descriptor: Int32
        let name: String

        init(_ name: String) throws {
            self.name = name
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            var path = Array(name.utf8)
            if path.first == UInt8(ascii: "@") { path[0] = 0 }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
            }
            guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
        }

        deinit {
            close(descriptor)
            if !name.hasPrefix("@") { unlink(name) }
        }
    }

    @Test func messagesReachAPathSocket() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString)").path
        let listener = try Listener(path)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
        try notifier.notify("READY=1\nSTATUS=idle")
        #expect(listener.receive() == "READY=1\nSTATUS=idle")
    }

    @Test func messagesReachAnAbstractSocket() throws {
        let name = "@systole-notify-\(UUID().uuidString)"
        let listener = try Listener(name)
        try SystemdNotifier(environment: ["NOTIFY_SOCKET": name]).notify("WATCHDOG=1")
        #expect(listener.receive() == "WATCHDOG=1")
    }

    @Test func withoutSystemdNothingIsSentAndTheWatchdogFollowsItsVariables() throws {
        let none = SystemdNotifier(environment: [:])
        #expect(none.socketPath == nil && none.watchdogInterval == nil)
        try none.notify("READY=1")
        let ours = SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())"])
        #expect(ours.watchdogInterval == .seconds(15))
        let others = SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"])
        #expect(others.watchdogInterval == nil, "the watchdog is for another process")
    }

    @Test func aSocketThatIsGoneIsAClearError() {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/notify"])
        let error = #expect(throws: SystemdNotifier.Failure.self) { try notifier.notify("READY=1") }
        #expect(error?.description.hasPrefix("sending to /nonexistent/notify failed") == true)
    }
}
