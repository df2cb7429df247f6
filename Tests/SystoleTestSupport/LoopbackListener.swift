import Foundation
import Glibc

/// A listening TCP socket on 127.0.0.1 at a port the kernel picks, for the fake servers of the hostile cases.
public struct LoopbackListener: Sendable {
    public let descriptor: Int32
    public let port: Int

    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    public init() throws(Failed) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard descriptor >= 0, bound, listen(descriptor, 16) == 0 else {
            throw Failed(description: "cannot listen on loopback: \(String(cString: strerror(errno)))")
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Calls `serve` on a thread of its own for each connection, closing it after; ends when ``stop()`` is called.
    public func serve(_ serve: @escaping @Sendable (Int32) -> Void) {
        let thread = Thread { [descriptor] in
            while true {
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else {
                    if errno == EINTR { continue }
                    close(descriptor)
                    return
                }
                Thread {
                    serve(client)
                    close(client)
                }.start()
            }
        }
        thread.start()
    }

    /// Stops accepting (connections already served end when their client closes).
    public func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Exactly `count` bytes from `client`, or nil when it closed first.
    public static func read(_ client: Int32, _ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let read = bytes.withUnsafeMutableBytes { recv(client, $0.baseAddress! + got, count - got, 0) }
            guard read > 0 else { return nil }
            got += read
        }
        return bytes
    }

    /// Sends what the socket takes of `bytes` without SIGPIPE; what `send` returns.
    public static func send(_ client: Int32, _ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
