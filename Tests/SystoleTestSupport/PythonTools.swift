import Foundation

/// The Python venv of independent decoders, schemas and references that export and analysis tests check systole's
/// output with (scripts/python-tools.sh makes it once: garmin-fit-sdk, fitdecode, xmlschema, neurokit2, and Garmin's
/// TCX schema).
public enum PythonTools {
    private static let oneAtATime = NSLock()

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../scripts/python-tools.sh").standardized.path

    /// The venv's python.
    public static func python() async throws -> String { try await ask([]) }

    /// The path of Garmin's TrainingCenterDatabase v2 schema.
    public static func tcxSchema() async throws -> String { try await ask(["--schema"]) }

    /// Runs a script of the tests' with the venv's python and returns its standard output; fails with its error.
    /// One at a time in the test process: each starts an interpreter that imports numpy or pandas (seconds of CPU),
    /// and a handful at once on a two-core machine starved the tests that time the simulator's notifications.
    public static func run(_ script: String, _ arguments: [String]) async throws -> String {
        let python = try await python()
        // Each waits on a thread of its own (offThePool), so the lock never holds up Swift's pool.
        let result = try await offThePool {
            try oneAtATime.withLock { try CommandRunner.runBlocking(python, [script] + arguments) }
        }
        guard result.status == 0 else {
            // A script says why on either stream (the Web checks print a JSON failure on standard output).
            throw Failure(
                message: "\(script) exited \(result.status): \(result.standardOutput)\(result.standardError)"
            )
        }
        return result.standardOutput
    }

    private static func ask(_ arguments: [String]) async throws -> String {
        let result = try await CommandRunner.run("/bin/bash", [script] + arguments)
        guard result.status == 0 else {
            throw Failure(message: "scripts/python-tools.sh failed: \(result.standardError)")
        }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
