import BlueZ
import Foundation
import Glibc
import HeartRateProfile
import WorkoutKit

/// The live bpm log: one line per measurement, each batch of lines written with one `write(2)` as it comes (no
/// buffering), so `tail -f` shows every beat as it arrives and never half a line. Rotated by size: `live.log` → `live.log.1` → … → `live.log.N`.
package final class LiveLogFile: @unchecked Sendable {
    // The descriptor and size change only under `lock`.
    private let lock = NSLock()
    package let path: String
    package let maximumSize: Int
    package let keep: Int
    private var descriptor: Int32 = -1
    private var size = 0

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package init(path: String, maximumSize: Int, keep: Int) throws(Failure) {
        self.path = path
        self.maximumSize = maximumSize
        self.keep = keep
        do {
            try PrivateFolder.prepare(forFile: path)
        } catch {
            throw Failure(description: "cannot open the live log \(path): \(error)")
        }
        try open()
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    private func open() throws(Failure) {
        // Never through a link: whoever made it chose where heart rate would be appended. Non-blocking so that a
        // FIFO put there cannot hang the open; anything but a regular file is refused below.
        descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o640)
        guard descriptor >= 0 else {
            let reason =
                errno == ELOOP
                ? "it is a symbolic link; remove it (systoled writes only to a regular file of its own)"
                : "\(String(cString: strerror(errno))); check that its folder is writable or set live_log.path"
            throw Failure(description: "cannot open the live log \(path): \(reason)")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            descriptor = -1
            throw Failure(description: "cannot use the live log \(path): it is not a regular file; remove it")
        }
        size = Int(status.st_size)
    }

    /// Appends `lines` (a newline after each) in as few writes as rotation allows: one, unless the size limit
    /// falls among them.
    package func append(_ lines: [String]) throws(Failure) {
        lock.lock()
        defer { lock.unlock() }
        var chunk: [UInt8] = []
        for line in lines {
            let length = line.utf8.count + 1
            if size + chunk.count > 0, size + chunk.count + length > maximumSize {
                try write(chunk)
                chunk = []
                try rotate()
            }
            chunk += line.utf8
            chunk.append(UInt8(ascii: "\n"))
        }
        try write(chunk)
    }

    private func write(_ bytes: [UInt8]) throws(Failure) {
        guard !bytes.isEmpty else { return }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            throw Failure(description: "writing the live log \(path) failed: \(String(cString: strerror(errno)))")
        }
        size += bytes.count
    }

    private func rotate() throws(Failure) {
        close(descriptor)
        descriptor = -1
        if keep == 0 {
            unlink(path)
        } else {
            unlink("\(path).\(keep)")
            for index in stride(from: keep - 1, through: 1, by: -1) {
                rename("\(path).\(index)", "\(path).\(index + 1)")
            }
            rename(path, "\(path).1")
        }
        try open()
    }
}
