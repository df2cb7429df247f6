import Foundation
import Glibc

/// A running `systoled` process with its store and live log in a folder of the test's, started the way systemd
/// starts it (a notify socket) and ready once it sent `READY=1`.
public final class DaemonProcess: @unchecked Sendable {
    public let process: ChildProcess
    public let folder: URL
    public let notify: NotifySocket
    private let errors: Pipe

    public var storePath: String { folder.appendingPathComponent("health.sqlite").path }
    public var liveLogPath: String { folder.appendingPathComponent("live.log").path }

    public struct NotReady: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts systoled on `bus` with `arguments` added, and waits for `READY=1`.
    public static func start(bus: PrivateBus, folder: URL, _ arguments: [String] = []) async throws -> DaemonProcess {
        let daemon = try DaemonProcess(bus: bus, folder: folder, arguments)
        guard try await daemon.notify.waitFor("READY=1") != nil else {
            daemon.process.terminate()
            throw NotReady(description: "systoled did not send READY=1: \(await daemon.standardError())")
        }
        return daemon
    }

    private init(bus: PrivateBus, folder: URL, _ arguments: [String]) throws {
        self.folder = folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let config = folder.appendingPathComponent("systoled.toml").path
        if !FileManager.default.fileExists(atPath: config) {
            _ = FileManager.default.createFile(atPath: config, contents: Data())
        }
        notify = try NotifySocket.abstract()
        process = ChildProcess()
        process.executableURL = CommandRunner.productsDirectory.appendingPathComponent("systoled")
        process.arguments =
            [
                "--config", config, "--bus", bus.address,
                "--store", folder.appendingPathComponent("health.sqlite").path,
                "--live-log", folder.appendingPathComponent("live.log").path,
            ] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.name
        environment["WATCHDOG_USEC"] = "2000000"
        environment.removeValue(forKey: "WATCHDOG_PID")
        process.environment = environment
        errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        if let log = environment["SYSTOLE_PEAK_LOG"] { recordPeak(into: log) }
    }

    /// For scripts/surfaces-fuzz.sh: watches the process's peak resident memory (VmHWM, which only grows) every
    /// 50 ms and appends a line to `log` each time it grew and when the process ended: its pid, its folder (without
    /// the tests' UUIDs), the peak in KiB, and how it ended ("running" until then; the test process may end first).
    private func recordPeak(into log: String) {
        let process = self.process
        let pid = process.processIdentifier
        let folder = self.folder.path.replacing(/[-.]?[0-9A-F]{8}(-[0-9A-F]{4}){3}-[0-9A-F]{12}/, with: "")
        // One write in append mode: the lines of tests that run side by side do not mix.
        let append: @Sendable (Int, String) -> Void = { peak, how in
            let file = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            guard file >= 0 else { return }
            _ = "\(pid)\t\(folder)\t\(peak)\t\(how)\n".withCString { write(file, $0, strlen($0)) }
            close(file)
        }
        let thread = Thread { [self] in
            var peak = 0
            while process.isRunning {
                let now = memory("VmHWM")
                if now > peak {
                    peak = now
                    append(peak, "running")
                }
                usleep(50_000)
            }
            let signalled = process.terminationReason == .uncaughtSignal
            append(peak, "\(signalled ? "signal" : "status") \(process.terminationStatus)")
        }
        thread.start()
    }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to exit and returns its status.
    /// Its exit status, or nil if it did not exit within `timeout`; then it is killed, so a test fails instead
    /// of hanging. (It polls: a blocked wait could not be given up.)
    public func waitForExit(timeout: Duration = generousDeadline) async throws -> Int32? {
        guard await eventually(timeout: timeout, { !process.isRunning }) else {
            signal(SIGKILL)
            return nil
        }
        return process.terminationStatus
    }

    /// What it wrote to standard error (complete once it exited).
    public func standardError() async -> String {
        (try? await offThePool { [errors, process] in
            if process.isRunning { return "" }
            return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }) ?? ""
    }

    /// The live log's lines so far.
    public func liveLogLines() -> [String] {
        ((try? String(contentsOfFile: liveLogPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Waits until the live log holds at least `count` lines that `matching` accepts (by default, heart-rate readings
    /// of a running workout), and returns them.
    @discardableResult
    public func waitForLiveLog(
        _ count: Int = 1,
        _ what: String = "readings of a running workout in the live log",
        matching: (String) -> Bool = { $0.contains(" bpm=") && $0.contains("state=running") }
    ) async throws -> [String] {
        try await waitFor("\(count) \(what)") {
            let lines = liveLogLines().filter(matching)
            return lines.count >= count ? lines : nil
        }
    }

    /// CPU seconds the process used so far (user and system).
    public func cpuSeconds() throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
        guard let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3, utime 14 and stime 15 (1-based over the whole line).
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The CPU seconds the process uses over `window` of wall-clock time: a measurement window, not a wait for a
    /// result (CPU time, unlike wall-clock time, does not grow when other processes keep the machine busy).
    public func cpuSeconds(over window: Duration) async throws -> Double {
        let before = try cpuSeconds()
        try await Task.sleep(for: window)
        return try cpuSeconds() - before
    }

    /// A memory field of the process's `/proc/PID/status`, in KiB (0 when gone): `VmHWM` its peak resident memory,
    /// `RssAnon` its heap and stacks now.
    public func memory(_ field: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? 0
    }

    /// Stops it with SIGKILL if still running (for cleanup).
    public func stopNow() {
        if process.isRunning { signal(SIGKILL) }
    }
}
