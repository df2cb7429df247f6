import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension UUID {
    /// A random (version 4) UUID, like `UUID()`.
    ///
    /// Foundation's `UUID()` opens, reads and closes /dev/urandom for every UUID on Linux; every sample gets one,
    /// and at hundreds of samples a second that showed in profiles. This one takes its bytes from a pool filled
    /// by glibc's arc4random_buf (getrandom(2) underneath) 4 KiB at a time.
    public static func random() -> UUID {
        var bytes = randomPool.withLock { $0.take() }
        bytes.6 = (bytes.6 & 0x0F) | 0x40  // version 4
        bytes.8 = (bytes.8 & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: bytes)
    }
}

private let randomPool = Mutex(RandomPool())

private struct RandomPool {
    private var bytes = [UInt8](repeating: 0, count: 4096)
    private var used = 4096

    mutating func take() -> uuid_t {
        if used + 16 > bytes.count { refill() }
        defer { used += 16 }
        return bytes.withUnsafeBytes { raw in raw.loadUnaligned(fromByteOffset: used, as: uuid_t.self) }
    }

    private mutating func refill() {
        bytes.withUnsafeMutableBytes { raw in arc4random_buf(raw.baseAddress!, raw.count) }
        used = 0
    }
}
