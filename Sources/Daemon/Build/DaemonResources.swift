import BlueZ
import DBus
import Foundation
import Logging
import Recording
import SQLiteStore
import SystoledConfiguration

/// What systoled opens before it assembles its services: the store, the bus with bluetoothd's objects, and the
/// live log. Each step fails with the exit status and message its kind of failure asks for; a step that fails
/// closes the bus a step before it opened.
struct DaemonResources {
    let configuration: DaemonConfiguration
    let logger: Logger
    let metrics: DaemonMetrics
    let store: SQLiteHealthStore
    let connection: DBusConnection
    let client: BlueZClient
    let liveLog: LiveLogFile

    static func open(
        _ configuration: DaemonConfiguration,
        environment: [String: String]
    ) async throws(DaemonStartError) -> DaemonResources {
        var logger = Logger(label: "systoled")
        logger.logLevel = .info
        let metrics = DaemonMetrics()
        let store = try openStore(configuration, metrics: metrics)
        let connection = try await connect(configuration, environment: environment)
        let client: BlueZClient
        do {
            client = try await BlueZClient.connect(connection)
        } catch {
            connection.close()
            throw DaemonStartError(description: "cannot watch bluetoothd: \(error)", exitCode: 69)
        }
        let liveLog: LiveLogFile
        do {
            liveLog = try LiveLogFile(
                path: configuration.liveLogPath,
                maximumSize: configuration.liveLogMaximumSize,
                keep: configuration.liveLogKeep
            )
        } catch {
            connection.close()
            throw DaemonStartError(description: "\(error)", exitCode: 73)
        }
        return DaemonResources(
            configuration: configuration,
            logger: logger,
            metrics: metrics,
            store: store,
            connection: connection,
            client: client,
            liveLog: liveLog
        )
    }

    /// The store in its private folder, its commits timed into `metrics`.
    private static func openStore(
        _ configuration: DaemonConfiguration,
        metrics: DaemonMetrics
    ) throws(DaemonStartError) -> SQLiteHealthStore {
        do {
            try PrivateFolder.prepare(forFile: configuration.storePath)
        } catch {
            throw DaemonStartError(
                description: "cannot open the store \(configuration.storePath): \(error)",
                exitCode: 73
            )
        }
        do {
            return try SQLiteHealthStore(
                path: configuration.storePath,
                commitsInPlace: { WorkoutThread.isCurrent },
                commitObserver: { [commitDuration = metrics.commitDuration] in commitDuration.record(duration: $0) },
                keepsChangeLog: configuration.replication != nil,
                synchronization: configuration.storeSync == .commit ? .everyCommit : .everySecond
            )
        } catch {
            throw DaemonStartError(description: "\(error)", exitCode: 73)
        }
    }

    /// The bus, read once per tick (``busTick``): one wakeup for everything that came meanwhile instead of one per
    /// notification, at most the tick added to a reading's way to the live log. `SYSTOLE_BUS_TICK_MS` replaces
    /// it, for measuring other ticks.
    private static func connect(
        _ configuration: DaemonConfiguration,
        environment: [String: String]
    ) async throws(DaemonStartError) -> DBusConnection {
        do {
            return try await DBusConnection.connect(
                to: configuration.bus,
                coalescing: busTick(fromEnvironment: environment["SYSTOLE_BUS_TICK_MS"])
            )
        } catch {
            // The binding's messages about the bus itself already say which bus it could not connect to.
            let reason =
                error.message.hasPrefix("cannot connect to the")
                ? error.message : "cannot connect to the \(configuration.bus) bus: \(error.message)"
            throw DaemonStartError(
                description: "\(reason). Is dbus running? Choose another bus with --bus or 'bus' in the configuration",
                exitCode: 69
            )
        }
    }
}
