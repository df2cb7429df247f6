import Foundation
import Glibc

/// A running `systoled` process with its store and live log in a folder of the test's, started the way systemd
/// starts it (a notify socket) and ready once it sent `READY=1`.
public final class DaemonProcess: @unchecked Sendable {
    public let process: Process
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
        process = Process()
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
    }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to exit and returns its status.
    /// Its exit status, or nil if it did not exit within `timeout`; then it is killed, so a test fails instead
    /// of hanging. (It polls: a blocked wait could not be given up.)
    public func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                signal(SIGKILL)
                return nil
            }
            try await Task.sleep(for: .milliseconds(20))
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

    /// Stops it with SIGKILL if still running (for cleanup).
    public func stopNow() {
        if process.isRunning { signal(SIGKILL) }
    }
}
