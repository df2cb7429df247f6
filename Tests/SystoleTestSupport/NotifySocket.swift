import Foundation
import Glibc

/// A datagram socket bound where systemd's notify socket would be (`name` starting with "@" is abstract), to
/// receive what a service sends with sd_notify.
public final class NotifySocket: @unchecked Sendable {
    public let name: String
    private let descriptor: Int32

    public struct BindFailed: Error {}

    public init(_ name: String) throws {
        self.name = name
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(name.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw BindFailed() }
    }

    /// A socket with a fresh abstract name.
    public static func abstract() throws -> NotifySocket { try NotifySocket("@systole-notify-\(UUID().uuidString)") }

    /// The next message, or nil after `timeout` seconds (blocking: call it through `offThePool`).
    public func receive(timeout: Int = 2) -> String? {
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }

    /// Messages until one contains `line` (as a whole line), or nil after `timeout` seconds in all.
    public func waitFor(_ line: String, timeout: Double = 30) async throws -> [String]? {
        try await waitFor(timeout: timeout) { $0 == line }
    }

    /// Messages until one has a line that satisfies `matches`, or nil after `timeout` seconds in all.
    public func waitFor(
        timeout: Double = 30,
        _ matches: @escaping @Sendable (Substring) -> Bool
    ) async throws -> [String]? {
        try await offThePool { [self] in
            let deadline = Date().addingTimeInterval(timeout)
            var seen: [String] = []
            while Date() < deadline {
                guard let message = self.receive(timeout: 1) else { continue }
                seen.append(message)
                if message.split(separator: "\n").contains(where: matches) { return seen }
            }
            return nil
        }
    }

    deinit {
        close(descriptor)
        if !name.hasPrefix("@") { unlink(name) }
    }
}
