import Foundation
import Glibc

/// Where `systole export` writes a file as it comes: standard output, or a temporary file beside the destination
/// that is renamed over it once the whole file is there (``commit(as:replacing:)``), so a failed export leaves no
/// partial file. Files are created readable by their owner only: they hold health data.
final class ExportTarget: @unchecked Sendable {
    let fd: Int32
    private let temporary: String?
    private(set) var written = 0

    /// Opens the target: standard output for `-`, else a temporary file in `output`'s folder (the current folder
    /// when no output is named).
    init(output: String?) throws {
        if output == "-" {
            fd = STDOUT_FILENO
            temporary = nil
            return
        }
        let folder = output.map { ($0 as NSString).deletingLastPathComponent } ?? ""
        let path = (folder.isEmpty ? "" : folder + "/") + ".systole-export-\(getpid()).part"
        let opened = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            throw CommandFailure.invalidInput("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        fd = opened
        temporary = path
    }

    /// Appends `bytes`; throws when the target cannot take them (a full disk, a closed pipe).
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let count = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                throw CommandFailure.invalidInput("cannot write the file: \(String(cString: strerror(errno)))")
            }
            offset += count
        }
        written += bytes.count
    }

    /// Makes the file `path` (nothing to do for standard output); refuses to replace an existing file unless
    /// `replacing`.
    func commit(as path: String, replacing: Bool) throws {
        guard let temporary else { return }
        defer { close(fd) }
        if !replacing, FileManager.default.fileExists(atPath: path) {
            unlink(temporary)
            throw CommandFailure.invalidInput("\(path) exists; name another file with -o, or remove it first")
        }
        guard fsync(fd) == 0, rename(temporary, path) == 0 else {
            let error = errno
            unlink(temporary)
            throw CommandFailure.invalidInput("cannot write \(path): \(String(cString: strerror(error)))")
        }
    }

    /// Leaves no file behind (the export failed).
    func discard() {
        guard let temporary else { return }
        close(fd)
        unlink(temporary)
    }

    /// Copies everything `source` yields until its end into the target, on a thread of its own (systoled answers
    /// only once the whole file is written, so the pipe is read meanwhile). Returns the bytes copied; closes
    /// `source`.
    func copy(from source: Int32) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { [self] in
                defer { close(source) }
                var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                var copied = 0
                continuation.resume(
                    with: Result {
                        while true {
                            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress!, $0.count) }
                            if count < 0, errno == EINTR { continue }
                            guard count >= 0 else {
                                throw CommandFailure.invalidInput(
                                    "reading the export failed: \(String(cString: strerror(errno)))"
                                )
                            }
                            if count == 0 { return copied }
                            try buffer.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                            copied += count
                        }
                    }
                )
            }
            thread.name = "systole-export"
            thread.start()
        }
    }
}
