import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A Unix socket that takes connections and never answers, as a stopped dbus-daemon does: the kernel completes
/// a client's connect into the listening queue, and nobody reads what the client sends.
final class SilentSocket: Sendable {
    /// A D-Bus address for the socket.
    let address: String
    private let descriptor: Int32
    private let directory: URL
    private let closed = Atomic(false)

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("systole-silent-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("bus").path
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failed(description: "socket(): \(String(cString: strerror(errno)))") }
        var name = sockaddr_un()
        name.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &name.sun_path) { buffer in
            buffer.copyBytes(from: path.utf8.prefix(buffer.count - 1))
        }
        let bound = withUnsafePointer(to: &name) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw Failed(description: "cannot listen on \(path): \(reason)")
        }
        self.descriptor = descriptor
        address = "unix:path=\(path)"
    }

    /// Whether a client's connection waits in the listening queue.
    var hasWaitingConnection: Bool {
        guard !closed.load(ordering: .relaxed) else { return false }
        var probe = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&probe, 1, 0) == 1
    }

    /// Stops listening: the connections still queued are reset, so a client blocked on one returns.
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        Glibc.close(descriptor)
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { close() }
}
