import Foundation
import Glibc

/// A program the tests start (systoled, systole-sim, dbus-daemon, PostgreSQL, mosquitto, a command), with the part
/// of Foundation's `Process` interface they use, started by `posix_spawn`.
///
/// Foundation's `Process` on Linux lists /proc/self/fd before each start to close the parent's descriptors in the
/// child, copying each entry's name as a whole 256-byte array; where glibc's directory buffer ends at the end of a
/// mapping, that copy reads past it and the test process dies with SIGSEGV in `memmove` under `Process.run()` (it
/// did, with some 1 400 descriptors open while the suite runs in parallel). Here the child closes every descriptor
/// above 2 itself (`closefrom` in its file actions) and nothing is listed.
public final class ChildProcess: @unchecked Sendable {
    /// How the program ended.
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    struct SpawnFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// The program to run (set before ``run()``).
    public var executableURL: URL?
    public var arguments: [String]?
    /// The whole environment of the program; nil gives it the test process's.
    public var environment: [String: String]?
    /// Each a `Pipe` or a `FileHandle` (`FileHandle.nullDevice` for /dev/null); nil leaves the test process's own.
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?

    /// The child's pid, 0 before ``run()``.
    public private(set) var processIdentifier: pid_t = 0
    private let ended = NSCondition()
    /// The raw wait status once the child has been reaped (guarded by `ended`).
    private var waitStatus: Int32?

    public init() {}

    /// Whether the program started and has not ended yet.
    public var isRunning: Bool {
        ended.withLock { processIdentifier != 0 && waitStatus == nil }
    }

    /// The exit status, or the signal that ended the program (see ``terminationReason``); call once it ended.
    public var terminationStatus: Int32 {
        let status = ended.withLock { waitStatus }
        guard let status else { preconditionFailure("the child process is still running") }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    public var terminationReason: TerminationReason {
        let status = ended.withLock { waitStatus }
        guard let status else { preconditionFailure("the child process is still running") }
        return status & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// Blocks until the program has ended.
    public func waitUntilExit() {
        ended.withLock {
            while waitStatus == nil { ended.wait() }
        }
    }

    /// Sends SIGTERM.
    public func terminate() {
        if processIdentifier > 0 { kill(processIdentifier, SIGTERM) }
    }

    /// Starts the program in a process group of its own, with its standard streams as set, and a thread that reaps
    /// it when it ends.
    public func run() throws {
        guard let path = executableURL?.path else { throw SpawnFailed(description: "no program to run") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var opened: [Int32] = []
        defer { for descriptor in opened { close(descriptor) } }
        for (target, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
            guard let source = try Self.descriptor(for: stream, target: target, opened: &opened) else { continue }
            posix_spawn_file_actions_adddup2(&actions, source, target)
        }
        guard let closeFrom = Self.closeFrom, closeFrom(&actions, 3) == 0 else {
            throw SpawnFailed(
                description: "posix_spawn_file_actions_addclosefrom_np failed or is missing (it needs glibc 2.34)"
            )
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        Self.startsClean(&attributes)
        let argv = ([path] + (arguments ?? [])).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for entry in envp ?? [] { free(entry) } }
        var pid: pid_t = 0
        let result =
            if let envp { posix_spawn(&pid, path, &actions, &attributes, argv, envp) } else {
                posix_spawn(&pid, path, &actions, &attributes, argv, environ)
            }
        guard result == 0 else {
            throw SpawnFailed(description: "could not start \(path): \(String(cString: strerror(result)))")
        }
        let child = pid
        ended.withLock { processIdentifier = child }
        closeChildEnds()
        let reaper = Thread { [self] in reap(child) }
        reaper.start()
    }

    /// A process group of its own (as Foundation's `Process` gives), nothing blocked and the usual signals at their
    /// defaults: the spawning thread may block signals (without this a `sleep` started from a test ignored SIGTERM),
    /// and the test process may ignore SIGPIPE.
    private static func startsClean(_ attributes: inout posix_spawnattr_t) {
        var none = sigset_t()
        sigemptyset(&none)
        var usual = sigset_t()
        sigemptyset(&usual)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&usual, signal)
        }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &usual)
        posix_spawnattr_setflags(
            &attributes,
            Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        )
        posix_spawnattr_setpgroup(&attributes, 0)
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    /// glibc's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does not declare.
    private static let closeFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: AddCloseFrom.self)
    }

    /// The descriptor to give the child as `target`: a pipe's end, a handle's descriptor, /dev/null, or nil to
    /// leave the test process's own.
    private static func descriptor(for stream: Any?, target: Int32, opened: inout [Int32]) throws -> Int32? {
        switch stream {
        case let pipe as Pipe:
            return target == 0 ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
        case let handle as FileHandle where handle === FileHandle.nullDevice:
            let null = open("/dev/null", O_RDWR | O_CLOEXEC)
            guard null >= 0 else { throw SpawnFailed(description: "/dev/null: \(String(cString: strerror(errno)))") }
            opened.append(null)
            return null
        case let handle as FileHandle:
            return handle.fileDescriptor
        default:
            return nil
        }
    }

    /// Closes the test process's copies of the pipe ends the child now holds, so a reader sees the end of the
    /// child's output when the child ends, and the child the end of its input when the test closes its end.
    private func closeChildEnds() {
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        if let pipe = standardOutput as? Pipe { try? pipe.fileHandleForWriting.close() }
        if let pipe = standardError as? Pipe, (standardOutput as? Pipe) !== pipe {
            try? pipe.fileHandleForWriting.close()
        }
    }

    private func reap(_ pid: pid_t) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        ended.withLock {
            waitStatus = status
            ended.broadcast()
        }
    }
}
