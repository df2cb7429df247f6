import Foundation
import Glibc

/// A connected `SOCK_SEQPACKET` pair, as bluetoothd's AcquireNotify makes one, and what tests ask of descriptors.
public enum SocketPair {
    /// Why the pair could not be made.
    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    /// A new pair: one end for the code under test, the other for the test to play the far side.
    public static func make() throws -> (ours: Int32, theirs: Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0 else {
            throw Failed(description: "socketpair: \(String(cString: strerror(errno)))")
        }
        return (fds[0], fds[1])
    }

    /// Sends `bytes` as one datagram.
    public static func send(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// What `/proc/self/fd/N` links to (`socket:[inode]`), which names the socket itself: a descriptor number may
    /// be taken again at once by another test running beside this one.
    public static func identity(_ fd: Int32) throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
    }

    /// The descriptors open in this process that refer to the socket `identity` names.
    public static func descriptors(of identity: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == identity
        }
    }
}
