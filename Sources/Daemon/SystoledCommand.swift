import ArgumentParser
import Foundation
import Glibc
import SystoledConfiguration

/// `systoled`: records workouts from Bluetooth LE heart-rate sensors; controlled over D-Bus by `systole`.
public struct SystoledCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "systoled",
        abstract: "Record workouts from Bluetooth LE heart-rate sensors (controlled with 'systole').",
        discussion: """
            Keeps the configured sensors connected through bluetoothd, runs workouts started with \
            'systole start', writes the live bpm log and stores samples and workouts in SQLite. Stops cleanly \
            on SIGTERM or SIGINT; a workout in progress continues when systoled starts again.
            """
    )

    @OptionGroup public var options: DaemonOptions

    public init() {}

    public func run() async throws {
        // Health data is for systoled and group systole: the store, its -wal and -shm, the live log and their
        // folders are created 0640/0750 whoever starts systoled (the unit sets the same umask).
        umask(0o027)
        do {
            let daemon = try await buildDaemon(Array(CommandLine.arguments.dropFirst()))
            async let _ = releaseStartUpPages(after: startUpSettling)
            try await daemon.run()
        } catch let error as DaemonStartError {
            FileHandle.standardError.write(Data("systoled: \(error)\n".utf8))
            throw ExitCode(error.exitCode)
        }
    }
}

/// How long systoled's services get to start (connect the sensors, recover a workout) before the pages start-up
/// touched are released; what runs afterwards maps its own back.
let startUpSettling: Duration = .seconds(5)
