import Foundation

/// Runs a built executable of this package as a separate process, the way a user does.
public struct CommandRunner {
    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
    }

    struct NotBuilt: Error, CustomStringConvertible {
        var path: String
        var description: String { "\(path) does not exist: build the package (swift build --build-tests) first" }
    }

    /// The folder holding the package's build products: `$SYSTOLE_BIN_DIR`, else the folder of the test bundle.
    public static var productsDirectory: URL {
        if let directory = ProcessInfo.processInfo.environment["SYSTOLE_BIN_DIR"] {
            return URL(fileURLWithPath: directory)
        }
        var url = Bundle.main.bundleURL
        while url.pathExtension == "xctest" || url.lastPathComponent.hasSuffix(".xctest") {
            url.deleteLastPathComponent()
        }
        return url
    }

    /// Runs `executable` with `arguments` to its end, on a thread of its own (see `offThePool`).
    public static func run(_ executable: String, _ arguments: [String]) async throws -> Result {
        try await offThePool { try runBlocking(executable, arguments) }
    }

    static func runBlocking(_ executable: String, _ arguments: [String]) throws -> Result {
        // A path runs that program; a name runs this package's product.
        let url =
            executable.hasPrefix("/")
            ? URL(fileURLWithPath: executable) : productsDirectory.appendingPathComponent(executable)
        guard FileManager.default.isExecutableFile(atPath: url.path) else { throw NotBuilt(path: url.path) }
        let process = ChildProcess()
        process.executableURL = url
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes to the end before waiting, so a chatty child cannot block on a full pipe.
        let errorData = LockedData()
        let errorReader = Thread { errorData.set(error.fileHandleForReading.readDataToEndOfFile()) }
        errorReader.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorData.isSet { usleep(1_000) }
        return Result(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData.value, as: UTF8.self)
        )
    }
}

private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ value: Data) { lock.withLock { data = value } }
    var isSet: Bool { lock.withLock { data != nil } }
    var value: Data { lock.withLock { data ?? Data() } }
}

/// Runs the `systole` just built with `arguments` (no daemon: `decode`, `scan`, `--database`; against a daemon use
/// ``DaemonHarness/systole(_:)-(String...)``, which adds its bus).
public func systole(_ arguments: [String]) async throws -> CommandRunner.Result {
    try await CommandRunner.run("systole", arguments)
}

/// Runs the `systole` just built with `arguments`.
public func systole(_ arguments: String...) async throws -> CommandRunner.Result {
    try await systole(arguments)
}
