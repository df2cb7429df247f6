import Foundation
import Glibc
import Synchronization
import SystoleTestSupport
import Testing

@testable import Daemon

/// sd_notify by hand: datagrams to $NOTIFY_SOCKET, a path or an abstract name, as systemd listens.
@Suite struct SystemdNotifierTests {
    @Test func messagesReachAPathSocket() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString)").path
        let listener = try NotifySocket(path)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
        try notifier.notify("READY=1\nSTATUS=idle")
        #expect(try await listener.waitFor("STATUS=idle", timeout: 2) == ["READY=1\nSTATUS=idle"])
    }

    @Test func messagesReachAnAbstractSocket() async throws {
        let name = "@systole-notify-\(UUID().uuidString)"
        let listener = try NotifySocket(name)
        try SystemdNotifier(environment: ["NOTIFY_SOCKET": name]).notify("WATCHDOG=1")
        #expect(try await listener.waitFor("WATCHDOG=1", timeout: 2) == ["WATCHDOG=1"])
    }

    @Test func withoutSystemdNothingIsSentAndTheWatchdogFollowsItsVariables() throws {
        let none = SystemdNotifier(environment: [:])
        #expect(none.socketPath == nil && none.watchdogInterval == nil)
        try none.notify("READY=1")
        let ours = SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())"])
        #expect(ours.watchdogInterval == .seconds(15))
        let others = SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"])
        #expect(others.watchdogInterval == nil, "the watchdog is for another process")
        let tiny = SystemdNotifier(environment: ["WATCHDOG_USEC": "1"])
        #expect(tiny.watchdogInterval == .milliseconds(50), "a keep-alive a microsecond would pin a core")
        let huge = SystemdNotifier(environment: ["WATCHDOG_USEC": "18446744073709551615"])
        #expect(huge.watchdogInterval.map { $0 > .seconds(1_000_000) } == true)
    }

    @Test func aSocketThatIsGoneIsAClearError() {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/notify"])
        let error = #expect(throws: SystemdNotifier.Failure.self) { try notifier.notify("READY=1") }
        #expect(error?.description.hasPrefix("sending to /nonexistent/notify failed") == true)
    }

    @Test func aListenerThatStopsReadingCostsDroppedMessagesNotAStalledThread() throws {
        let name = "@systole-notify-\(UUID().uuidString)"
        let listener = try NotifySocket(name, reading: false)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": name])
        // Sent from a thread of its own: were a send to block, the test fails after its deadline instead of hanging.
        let outcome = Mutex<(sent: Int, dropped: SystemdNotifier.Failure?)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            var sent = 0
            var dropped: SystemdNotifier.Failure?
            // The kernel queues a few datagrams for a listener (net.unix.max_dgram_qlen, 10 by default); past them a
            // blocking send would wait for ever.
            for index in 0..<1_000 {
                do {
                    try notifier.notify("STATUS=running · \(index)")
                    sent += 1
                } catch {
                    dropped = error as? SystemdNotifier.Failure
                    break
                }
            }
            outcome.withLock { $0 = (sent, dropped) }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 10) == .success, "a send blocked")
        let (sent, dropped) = try #require(outcome.withLock { $0 })
        #expect(sent < 1_000, "the queue never filled")
        #expect(dropped?.description.hasPrefix("\(name) is not being read") == true)
        withExtendedLifetime(listener) {}
    }
}
