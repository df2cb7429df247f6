import Foundation
import Glibc

/// A datagram socket bound where systemd's notify socket would be (`name` starting with "@" is abstract), to
/// receive what a service sends with sd_notify. Like systemd it reads every message as it comes (on a thread of its
/// own), unless made with `reading: false` to play a listener that has stopped reading.
public final class NotifySocket: @unchecked Sendable {
    public let name: String
    private let descriptor: Int32
    private let inbox: Inbox?

    public struct BindFailed: Error {}

    /// What the reading thread has received, and whether it should stop.
    private final class Inbox: @unchecked Sendable {
        private let lock = NSLock()
        private var messages: [String] = []
        private var read = 0
        private var stopped = false

        func append(_ message: String) { lock.withLock { messages.append(message) } }
        /// The oldest message not yet handed out.
        func next() -> String? {
            lock.withLock {
                guard read < messages.count else { return nil }
                defer { read += 1 }
                return messages[read]
            }
        }
        func stop() { lock.withLock { stopped = true } }
        var isStopped: Bool { lock.withLock { stopped } }
    }

    public init(_ name: String, reading: Bool = true) throws {
        self.name = name
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(name.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            close(descriptor)
            throw BindFailed()
        }
        guard reading else {
            inbox = nil
            return
        }
        let inbox = Inbox()
        self.inbox = inbox
        var limit = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        // The thread owns the descriptor from here: it closes it once told to stop, so no read races the close.
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !inbox.isStopped {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count > 0 { inbox.append(String(decoding: buffer[..<count], as: UTF8.self)) }
            }
            close(descriptor)
        }.start()
    }

    /// A socket with a fresh abstract name.
    public static func abstract(reading: Bool = true) throws -> NotifySocket {
        try NotifySocket("@systole-notify-\(UUID().uuidString)", reading: reading)
    }

    /// Messages received since the last call, oldest first, until one contains `line` (as a whole line), or nil
    /// after `timeout` seconds in all.
    public func waitFor(_ line: String, timeout: Double = 60) async throws -> [String]? {
        try await waitFor(timeout: timeout) { $0 == line }
    }

    /// Messages received since the last call, oldest first, until one has a line that satisfies `matches`, or nil
    /// after `timeout` seconds in all. Messages after the match stay for the next call.
    public func waitFor(
        timeout: Double = 60,
        _ matches: @escaping @Sendable (Substring) -> Bool
    ) async throws -> [String]? {
        guard let inbox else { return nil }
        let deadline = Date().addingTimeInterval(timeout)
        var seen: [String] = []
        while true {
            while let message = inbox.next() {
                seen.append(message)
                if message.split(separator: "\n").contains(where: matches) { return seen }
            }
            guard Date() < deadline else { return nil }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    deinit {
        if let inbox { inbox.stop() } else { close(descriptor) }
        if !name.hasPrefix("@") { unlink(name) }
    }
}
