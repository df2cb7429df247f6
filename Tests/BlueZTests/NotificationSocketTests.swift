import DBus
import Foundation
import Glibc
import Synchronization
import SystoleTestSupport
import Testing

@testable import BlueZ

/// AcquireNotify's socket read on the loop thread beside the bus: every datagram in order, a zero-length one as a
/// datagram and not the end, an oversized one as empty, the end told once with its reason and the socket closed,
/// a flood that leaves the bus its turn, and one read-complete per read.
@Suite struct NotificationSocketTests {
    /// What a source handed over, and how it ended.
    final class Received: Sendable {
        let values = Mutex<[[UInt8]]>([])
        let ends = Mutex<[NotificationSocket.End]>([])

        func wait(for count: Int, ends endCount: Int = 0) async throws {
            try await waitUntil("\(count) datagrams and \(endCount) ends") {
                values.withLock { $0.count } >= count && ends.withLock { $0.count } >= endCount
            }
        }
    }

    func read(_ connection: DBusConnection, _ fd: Int32, into received: Received) -> DBusDescriptorWatch {
        NotificationSocket.read(fd, on: connection) { bytes, _ in
            received.values.withLock { $0.append(Array(bytes)) }
        } onEnd: { end in
            received.ends.withLock { $0.append(end) }
        }
    }

    /// A private bus and a connection to it, as `client`.
    struct Connected {
        let bus: PrivateBus
        let client: DBusConnection
    }

    func withConnection(_ body: (Connected) async throws -> Void) async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let client = try await DBusConnection.connect(to: .address(bus.address))
        defer { client.close() }
        try await body(Connected(bus: bus, client: client))
    }

    @Test func everyDatagramInOrderAndAHangUpAfterTheLast() async throws {
        try await withConnection { fixture in
            let (ours, theirs) = try SocketPair.make()
            let socket = try SocketPair.identity(ours)
            let received = Received()
            _ = read(fixture.client, ours, into: received)
            let sent = (0..<200).map { index -> [UInt8] in [0x10, UInt8(60 + index % 100), UInt8(index), 0x03] }
            // More than the socket holds: the sends block until the loop reads, so not on the cooperative pool.
            try await offThePool {
                for (index, value) in sent.enumerated() {
                    SocketPair.send(theirs, value)
                    if index == 100 { SocketPair.send(theirs, []) }
                }
                SocketPair.send(theirs, [UInt8](repeating: 0xAB, count: 512))
                SocketPair.send(theirs, [UInt8](repeating: 0xCD, count: 513))
                close(theirs)
            }
            try await received.wait(for: 203, ends: 1)
            var expected = sent
            expected.insert([], at: 101)
            expected.append([UInt8](repeating: 0xAB, count: 512))
            // Longer than any attribute value: passed on empty, so the reader counts it as malformed.
            expected.append([])
            #expect(received.values.withLock { $0 } == expected)
            #expect(received.ends.withLock { $0 } == [.hungUp])
            #expect(try SocketPair.descriptors(of: socket).isEmpty, "the reader closes its socket")
        }
    }

    @Test func aZeroLengthDatagramAloneIsNotTheEnd() async throws {
        try await withConnection { fixture in
            let (ours, theirs) = try SocketPair.make()
            defer { close(theirs) }
            let socket = try SocketPair.identity(ours)
            let received = Received()
            _ = read(fixture.client, ours, into: received)
            SocketPair.send(theirs, [])
            try await received.wait(for: 1)
            // A round trip: the loop has polled the socket again since it read the empty datagram.
            _ = try await fixture.client.nameOwner(of: "org.freedesktop.DBus")
            SocketPair.send(theirs, [0x00, 0x48])
            try await received.wait(for: 2)
            #expect(received.values.withLock { $0 } == [[], [0x00, 0x48]])
            #expect(received.ends.withLock { $0 }.isEmpty)
            #expect(try SocketPair.descriptors(of: socket) == ["\(ours)"], "the socket is still open")
        }
    }

    @Test func closingAndTheConnectionClosingEndEachSourceOnce() async throws {
        try await withConnection { fixture in
            let (first, firstPeer) = try SocketPair.make()
            let (second, secondPeer) = try SocketPair.make()
            let secondSocket = try SocketPair.identity(second)
            defer {
                close(firstPeer)
                close(secondPeer)
            }
            let closed = Received()
            let source = read(fixture.client, first, into: closed)
            let left = Received()
            _ = read(fixture.client, second, into: left)
            SocketPair.send(firstPeer, [0x00, 0x50])
            try await closed.wait(for: 1)
            NotificationSocket.close(source, on: fixture.client)
            NotificationSocket.close(source, on: fixture.client)
            try await closed.wait(for: 1, ends: 1)
            #expect(closed.ends.withLock { $0 } == [.closed])
            // The peer sees the hang-up: that is how bluetoothd learns the session is released.
            var probe = pollfd(fd: firstPeer, events: Int16(POLLIN), revents: 0)
            #expect(poll(&probe, 1, 1000) == 1 && probe.revents & Int16(POLLHUP) != 0)
            fixture.client.close()
            try await left.wait(for: 0, ends: 1)
            #expect(left.ends.withLock { $0 } == [.connectionClosed])
            // The second close, and the connection's, told the closed source nothing more.
            #expect(closed.ends.withLock { $0 } == [.closed])
            #expect(try SocketPair.descriptors(of: secondSocket).isEmpty)
        }
    }

    @Test func aFloodingSocketDoesNotStarveTheBus() async throws {
        try await withConnection { fixture in
            let (ours, theirs) = try SocketPair.make()
            let received = Received()
            _ = read(fixture.client, ours, into: received)
            let stop = Atomic<Bool>(false)
            let stopped = Atomic<Bool>(false)
            let flood = Thread {
                defer { stopped.store(true, ordering: .releasing) }
                while !stop.load(ordering: .relaxed) {
                    var probe = pollfd(fd: theirs, events: Int16(POLLOUT), revents: 0)
                    if poll(&probe, 1, 100) == 1 {
                        _ = [UInt8]([0x00, 0x40]).withUnsafeBytes {
                            Glibc.send(theirs, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                        }
                    }
                }
            }
            flood.start()
            defer { stop.store(true, ordering: .relaxed) }
            try await received.wait(for: 1000)
            // Calls still get through while the socket never runs dry (a starved bus would leave this call to its
            // timeout, and the call would throw).
            let owner = try await fixture.client.nameOwner(of: "org.freedesktop.DBus")
            #expect(owner == "org.freedesktop.DBus")
            stop.store(true, ordering: .relaxed)
            try await waitUntil("the flooding thread stopping") { stopped.load(ordering: .acquiring) }
            close(theirs)
        }
    }

    @Test func aReadsDatagramsAreFollowedByOneReadComplete() async throws {
        try await withConnection { fixture in
            let (ours, theirs) = try SocketPair.make()
            defer { close(theirs) }
            let log = Mutex<[Character]>([])
            _ = NotificationSocket.read(ours, on: fixture.client) { _, _ in
                log.withLock { $0.append("v") }
            } onReadComplete: {
                log.withLock { $0.append("|") }
            } onEnd: { _ in
            }
            for beat in 0..<20 { SocketPair.send(theirs, [0x00, UInt8(60 + beat)]) }
            try await waitUntil("20 datagrams and a read-complete after the last") {
                log.withLock { $0.filter { $0 == "v" }.count == 20 && $0.last == "|" }
            }
            let entries = log.withLock { $0 }
            #expect(entries.first == "v")
            #expect(!zip(entries, entries.dropFirst()).contains { $0 == "|" && $1 == "|" })
        }
    }
}
