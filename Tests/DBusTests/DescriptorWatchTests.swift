import DBus
import Foundation
import Glibc
import Synchronization
import SystoleTestSupport
import Testing

/// Descriptors on the loop thread: a watch's reader is called when there is input, its read-complete once per
/// dispatch, and the descriptor closed and the end told once however the watch ends; and a descriptor nobody asked
/// for (a signal or call carrying one) is never opened.
@Suite struct DescriptorWatchTests {
    /// What a watch's reader saw, and how the watch ended.
    final class Log: Sendable {
        let entries = Mutex<[String]>([])
        let ends = Mutex<[DBusDescriptorEnd]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    }

    /// Watches `fd`, reading one datagram per call; a datagram `[0xFF]` makes the reader end the watch.
    func watch(_ connection: DBusConnection, _ fd: Int32, _ log: Log) -> DBusDescriptorWatch {
        connection.watch(fd) { fd, hungUp in
            var byte: UInt8 = 0
            let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
            if count == 1 {
                log.append(byte == 0xFF ? "end" : "read \(byte)")
                return DBusDescriptorReading(delivered: true, ended: byte == 0xFF)
            }
            return DBusDescriptorReading(delivered: false, ended: hungUp)
        } onReadComplete: {
            log.append("complete")
        } onEnd: { end in
            log.ends.withLock { $0.append(end) }
        }
    }

    @Test func theReaderIsCalledForInputAndItsReadCompleteFollows() async throws {
        try await withBus { fixture in
            let (ours, theirs) = try SocketPair.make()
            defer { close(theirs) }
            let log = Log()
            _ = watch(fixture.client, ours, log)
            SocketPair.send(theirs, [7])
            try await waitUntil("the read and its read-complete") { log.entries.withLock { $0.count } >= 2 }
            #expect(log.entries.withLock { $0 } == ["read 7", "complete"])
            SocketPair.send(theirs, [8])
            try await waitUntil("the second read") { log.entries.withLock { $0.count } >= 4 }
            #expect(log.entries.withLock { $0 } == ["read 7", "complete", "read 8", "complete"])
            #expect(log.ends.withLock { $0 }.isEmpty)
        }
    }

    @Test func aReaderThatSaysItIsDoneEndsTheWatchAndClosesTheDescriptor() async throws {
        try await withBus { fixture in
            let (ours, theirs) = try SocketPair.make()
            defer { close(theirs) }
            let socket = try SocketPair.identity(ours)
            let log = Log()
            _ = watch(fixture.client, ours, log)
            SocketPair.send(theirs, [0xFF])
            try await waitUntil("the watch ending") { !log.ends.withLock { $0 }.isEmpty }
            #expect(log.ends.withLock { $0 } == [.byReader])
            #expect(try SocketPair.descriptors(of: socket).isEmpty, "the watch closes its descriptor")
        }
    }

    @Test func stoppingAndTheConnectionClosingEndEachWatchOnce() async throws {
        try await withBus { fixture in
            let (first, firstPeer) = try SocketPair.make()
            let (second, secondPeer) = try SocketPair.make()
            let secondSocket = try SocketPair.identity(second)
            defer {
                close(firstPeer)
                close(secondPeer)
            }
            let stopped = Log()
            let handle = watch(fixture.client, first, stopped)
            let left = Log()
            _ = watch(fixture.client, second, left)
            fixture.client.stopWatching(handle)
            fixture.client.stopWatching(handle)
            try await waitUntil("the stopped watch ending") { !stopped.ends.withLock { $0 }.isEmpty }
            // The peer sees the hang-up.
            var probe = pollfd(fd: firstPeer, events: Int16(POLLIN), revents: 0)
            #expect(poll(&probe, 1, 1000) == 1 && probe.revents & Int16(POLLHUP) != 0)
            fixture.client.close()
            try await waitUntil("the other watch ending") { !left.ends.withLock { $0 }.isEmpty }
            #expect(left.ends.withLock { $0 } == [.connectionClosed])
            #expect(stopped.ends.withLock { $0 } == [.stopped], "told once, and nothing more at the close")
            #expect(try SocketPair.descriptors(of: secondSocket).isEmpty)
        }
    }

    @Test func signalsAndCallsCarryingDescriptorsAreNotOpened() async throws {
        try await withBus { fixture in
            let signals = try await fixture.client.signals(matching: DBusMatchRule(interface: "org.systole.Test.FD"))
            let object = DBusObject(path: "/test/fd")
            object.addInterface(DBusInterface("org.systole.Test.FD", methods: [DBusMethod("Take") { _ in [] }]))
            fixture.client.export(object)
            let (ours, theirs) = try SocketPair.make()
            defer {
                close(ours)
                close(theirs)
            }
            for _ in 0..<200 {
                try fixture.server.emit(
                    path: "/test/fd",
                    interface: "org.systole.Test.FD",
                    member: "Descriptor",
                    arguments: [.unixFD(ours)]
                )
            }
            var refused = 0
            for _ in 0..<50 {
                do {
                    _ = try await fixture.server.call(
                        destination: fixture.client.uniqueName,
                        path: "/test/fd",
                        interface: "org.systole.Test.FD",
                        method: "Take",
                        arguments: [.unixFD(ours)]
                    )
                } catch {
                    // Refused unread, with the reason; not any other failure.
                    if "\(error)".contains("takes no file descriptor") { refused += 1 }
                }
            }
            try fixture.server.emit(path: "/test/fd", interface: "org.systole.Test.FD", member: "End")
            for try await signal in signals {
                #expect(signal.member == "End", "a signal with a descriptor reached a subscriber")
                break
            }
            #expect(refused == 50)
            // Each message carried a copy of `ours`: had one been opened here, it would still point at its socket
            // (other tests in this process open descriptors meanwhile, so the socket is what is counted).
            let copies = try SocketPair.descriptors(of: try SocketPair.identity(ours))
            #expect(copies == ["\(ours)"], "\(copies.count) descriptors of the socket open")
        }
    }
}
