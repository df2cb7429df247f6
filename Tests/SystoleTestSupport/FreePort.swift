import Foundation
import Glibc

/// A TCP port on loopback that nothing listens on now: the kernel picks one for a socket bound to port 0, which is
/// closed again. Another program could take it before the test does; the ephemeral range makes that unlikely.
public func freeTCPPort() -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(socket, socketAddress, length) == 0 ? getsockname(socket, socketAddress, &length) : -1
        }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The TCP ports process `pid` listens on (its sockets in LISTEN state, from /proc), to tell that nothing listens.
public func listeningTCPPorts(of pid: Int32) -> [Int] {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
    var inodes: Set<String> = []
    for fd in fds {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = readlink("/proc/\(pid)/fd/\(fd)", &buffer, 255)
        guard count > 0 else { continue }
        let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if target.hasPrefix("socket:[") { inodes.insert(String(target.dropFirst(8).dropLast())) }
    }
    var ports: [Int] = []
    for table in ["/proc/\(pid)/net/tcp", "/proc/\(pid)/net/tcp6"] {
        guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            // local_address is HEXADDR:HEXPORT; st 0A is LISTEN; the inode is the tenth field.
            guard fields.count > 9, fields[3] == "0A", inodes.contains(String(fields[9])),
                let port = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) })
            else { continue }
            ports.append(port)
        }
    }
    return ports
}
