import Foundation
import Glibc

/// Writes an export into a descriptor a client handed over (the write end of its pipe), waiting for room with
/// `poll` so a reader that stops reading costs a timeout, never a thread for good.
struct DescriptorWriter {
    /// Why the writing stopped.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let fd: Int32
    /// How long the reader may take nothing before the export is given up.
    let progressTimeout: Duration
    /// When the whole export must be written by.
    let deadline: ContinuousClock.Instant
    private(set) var written = 0

    init(fd: Int32, progressTimeout: Duration, deadline: ContinuousClock.Instant) {
        self.fd = fd
        self.progressTimeout = progressTimeout
        self.deadline = deadline
    }

    /// Writes all of `bytes`, a pipe's atomic size at a time once `poll` says there is room, so no write blocks.
    mutating func write(_ bytes: [UInt8]) throws {
        var offset = 0
        try bytes.withUnsafeBytes { buffer in
            while offset < buffer.count {
                try waitForRoom()
                let piece = min(buffer.count - offset, Int(PIPE_BUF))
                let count = Glibc.write(fd, buffer.baseAddress! + offset, piece)
                if count < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    throw Failure(description: Self.reason(errno))
                }
                offset += count
                written += count
            }
        }
    }

    private func waitForRoom() throws {
        while true {
            let now = ContinuousClock.now
            guard now < deadline else {
                throw Failure(description: "the export took longer than systoled allows for one (the reader is slow)")
            }
            let wait = min(progressTimeout, deadline - now)
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&entry, 1, Int32(wait / .milliseconds(1)))
            if ready < 0 {
                if errno == EINTR { continue }
                throw Failure(description: Self.reason(errno))
            }
            if ready == 0, wait == progressTimeout {
                throw Failure(
                    description: "the reader took nothing for \(progressTimeout) and was given up (a paused pipe? "
                        + "write the file with -o FILE)"
                )
            }
            if entry.revents & Int16(POLLOUT) != 0 { return }
            if entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                throw Failure(description: "the reader closed its end before the file was written")
            }
        }
    }

    private static func reason(_ error: Int32) -> String {
        error == EPIPE
            ? "the reader closed its end before the file was written"
            : "writing the file failed: \(String(cString: strerror(error)))"
    }
}
