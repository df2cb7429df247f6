import ArgumentParser
import BlueZ
import DBus
import Foundation
import HealthStore
import LiveWeb
import Logging
import MQTTBridge
import Metrics
import Recording
import Replication
import ServiceLifecycle
import WorkoutKit

/// systoled's flags; each overrides the configuration file.
public struct DaemonOptions: ParsableArguments {
    @Option(help: "The configuration file (default: \(DaemonConfiguration.defaultPath), used if present).")
    public var config: String?

    @Option(help: "The bus for the control API and bluetoothd: system, session, or an address (unix:path=…).")
    public var bus: String?

    @Option(help: "The SQLite store (default: $STATE_DIRECTORY/health.sqlite, else /var/lib/systole/health.sqlite).")
    public var store: String?

    @Option(
        name: .customLong("live-log"),
        help: "The live bpm log (default: $LOGS_DIRECTORY/live.log, else /var/log/systole/live.log)."
    )
    public var liveLog: String?

    @Option(help: "The Bluetooth adapter, like hci0 (default: every powered adapter).")
    public var adapter: String?

    @Option(name: .customLong("sensor"), help: "A sensor to keep connected: an address, or 'any' (repeatable).")
    public var sensors: [String] = []

    public init() {}

    /// The configuration these options select: the file (if any), then the flags over it.
    public func configuration(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(DaemonConfiguration.Error) -> DaemonConfiguration {
        var configuration = try DaemonConfiguration.load(
            path: config ?? DaemonConfiguration.defaultPath,
            optional: config == nil,
            environment: environment
        )
        func flag<T>(
            _ name: String,
            _ body: () throws(DaemonConfiguration.Reason) -> T
        ) throws(DaemonConfiguration.Error)
            -> T
        {
            do {
                return try body()
            } catch {
                throw DaemonConfiguration.Error(file: "--\(name)", line: 0, reason: error.text)
            }
        }
        if let bus {
            configuration.bus = try flag("bus") { () throws(DaemonConfiguration.Reason) in
                try DaemonConfiguration.bus(bus)
            }
        }
        if let store {
            configuration.storePath = try flag("store") { () throws(DaemonConfiguration.Reason) in
                try DaemonConfiguration.path(store, "store")
            }
        }
        if let liveLog {
            configuration.liveLogPath = try flag("live-log") { () throws(DaemonConfiguration.Reason) in
                try DaemonConfiguration.path(liveLog, "live-log")
            }
        }
        if let adapter {
            configuration.adapter = try flag("adapter") { () throws(DaemonConfiguration.Reason) in
                try DaemonConfiguration.adapter(adapter)
            }
        }
        if !sensors.isEmpty {
            configuration.sensors = try flag("sensor") { () throws(DaemonConfiguration.Reason) in
                try DaemonConfiguration.sensors(sensors)
            }
        }
        return configuration
    }
}

/// Why systoled could not start; the message says what to do.
public struct DaemonStartError: Error, CustomStringConvertible {
    public var description: String
    /// The exit status: 78 (EX_CONFIG) for a configuration mistake, which restarting will not fix.
    public var exitCode: Int32
}

/// The daemon, built and ready to run: every long-lived part is a service in one `ServiceGroup`.
public struct Daemon: Sendable {
    public let configuration: DaemonConfiguration
    public let group: ServiceGroup

    /// Runs until SIGTERM or SIGINT (graceful: the workout stays recoverable) or until a part fails.
    public func run() async throws { try await group.run() }
}

/// How long systoled lets bus input gather before reading it all in one wakeup. Each wakeup costs a commit, a
/// live-log write and a few task hops whatever it carries, so a longer tick costs less CPU per notification but
/// delays the live log: with a hundred sensors out of step, 75 ms put readings on the live log after 39 ms (p50)
/// and 76 ms (p99), within the 50/100 ms the benchmark asks for (docs/performance.md). A lone notification after a
/// quiet spell is read at once.
let busTick: Duration = .milliseconds(75)

/// The bus tick `SYSTOLE_BUS_TICK_MS` asks for, within 0–1 000 ms (a longer one would leave the daemon deaf to
/// its own callers for as long); the default when it is absent or not a whole number.
func busTick(fromEnvironment milliseconds: String?) -> Duration {
    guard let milliseconds, let value = Int(milliseconds) else { return busTick }
    return .milliseconds(min(max(value, 0), 1_000))
}

/// Builds systoled from its command-line arguments (without the program name), as `systoled` itself and the
/// tests do: reads the configuration, opens the store, connects to the bus, takes the control API's name.
public func buildDaemon(
    _ arguments: [String],
    environment: [String: String] = ProcessInfo.processInfo.environment,
    clock: any WorkoutClock = SystemWorkoutClock()
) async throws(DaemonStartError) -> Daemon {
    let options: DaemonOptions
    do {
        options = try DaemonOptions.parse(arguments)
    } catch {
        throw DaemonStartError(description: DaemonOptions.fullMessage(for: error), exitCode: 64)
    }
    let configuration: DaemonConfiguration
    do {
        configuration = try options.configuration(environment: environment)
    } catch {
        throw DaemonStartError(description: "configuration error: \(error)", exitCode: 78)
    }
    var logger = Logger(label: "systoled")
    logger.logLevel = .info

    let store: SQLiteHealthStore
    do {
        try PrivateFolder.prepare(forFile: configuration.storePath)
    } catch {
        throw DaemonStartError(description: "cannot open the store \(configuration.storePath): \(error)", exitCode: 73)
    }
    let metrics = DaemonMetrics()
    do {
        store = try SQLiteHealthStore(
            path: configuration.storePath,
            commitsInPlace: { WorkoutThread.isCurrent },
            commitObserver: { [commitDuration = metrics.commitDuration] in commitDuration.record(duration: $0) },
            keepsChangeLog: configuration.replication != nil,
            synchronization: configuration.storeSync == .commit ? .everyCommit : .everySecond
        )
    } catch {
        throw DaemonStartError(description: "\(error)", exitCode: 73)
    }
    let connection: DBusConnection
    do {
        // Heart rate arrives about once a second per sensor: reading the bus once per tick for everything that
        // came meanwhile costs one wakeup instead of one per notification (docs/performance.md), and adds at
        // most the tick to a reading's way to the live log. SYSTOLE_BUS_TICK_MS replaces it, for measuring other
        // ticks (docs/performance.md).
        connection = try await DBusConnection.connect(
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

    let sensors = SensorManager(
        client: client,
        targets: configuration.sensors.map(\.target),
        adapter: configuration.adapter,
        notificationLimit: configuration.notificationLimit,
        athletes: configuration.athletes,
        notify: configuration.bluetooth.notify,
        notifyBySensor: configuration.bluetooth.notifyBySensor,
        logger: logger
    )
    let workouts = WorkoutManager(
        store: store,
        readings: sensors.readings,
        sensorStatuses: { sensors.sensors },
        sampleTypes: configuration.sampleTypes,
        clock: clock,
        profile: configuration.profile,
        logger: logger
    )
    // The web server's address and token; a token systoled makes itself when none is configured, which only
    // `systole web` (group systole, through the bus policy) hands out.
    let web = configuration.http.map { http in
        LiveWebConfiguration(host: http.host, port: http.port, token: http.token ?? makeToken())
    }
    let replicator = configuration.replication.map { Replicator(settings: $0, store: store, logger: logger) }
    let exporter = WorkoutExporter(store: store)
    let control = ControlService(
        connection: connection,
        client: client,
        workouts: workouts,
        sensors: sensors,
        store: store,
        exporter: exporter,
        adapter: configuration.adapter,
        clock: clock,
        profile: configuration.profile,
        webPage: web?.pageAddress,
        replicator: replicator
    )
    do {
        try await control.publish()
    } catch {
        connection.close()
        throw DaemonStartError(description: "cannot offer the control API: \(error.message)", exitCode: 69)
    }
    logger.info(
        "systoled \(ProcessInfo.processInfo.processIdentifier) on the \(configuration.bus) bus; store \(configuration.storePath); live log \(configuration.liveLogPath); sensors \(configuration.sensors.map(\.description).joined(separator: ", "))"
    )
    let liveLogService = LiveLogService(
        file: liveLog,
        format: configuration.liveLogFormat,
        privacy: configuration.privacy,
        workouts: workouts,
        startTimer: { instant, check in
            let timer = connection.runOnLoop(at: instant, repeating: check)
            return { timer.cancel() }
        },
        logger: logger
    )
    let live = DaemonLiveSource(
        workouts: workouts,
        sensors: sensors,
        store: store,
        exporter: exporter,
        profile: configuration.profile,
        privacy: configuration.privacy,
        clock: clock,
        metrics: metrics
    )
    let pipeline = RecordingPipeline(
        readings: sensors.readings,
        workouts: workouts,
        liveLog: liveLogService,
        outputs: [control, live, metrics],
        logger: logger
    )
    var outputs: [any Service] = [live]
    if let mqtt = configuration.mqtt {
        outputs.append(
            MQTTPublisher(
                settings: mqtt,
                feed: live.feed,
                status: { live.status() },
                onDropped: { metrics.mqttMessagesDropped($0) },
                onConnection: { metrics.mqttConnection($0) },
                logger: logger
            )
        )
        logger.info(
            "MQTT to \(mqtt.usesTLS ? "mqtts" : "mqtt")://\(mqtt.host):\(mqtt.port) as \(mqtt.clientID), topics \(mqtt.topicPrefix)/…, discovery \(mqtt.discoveryPrefix)/…"
        )
    }
    if let replicator { outputs.append(replicator) }
    if let web {
        outputs.append(LiveWebServer(configuration: web, source: live, logger: logger))
        logger.info(
            "web page on http://\(web.host.contains(":") ? "[\(web.host)]" : web.host):\(web.port)/ ('systole web' prints its address with the token)"
        )
    }
    // Shut down in reverse: systemd hears STOPPING first, the bus and the store go last.
    let services: [any Service] =
        [
            BusService(connection: connection, client: client),
            StoreService(store: store),
            sensors,
            pipeline,
            liveLogService,
            control,
        ] + outputs + [
            NotifierService(notifier: SystemdNotifier(environment: environment), workouts: workouts, logger: logger)
        ]
    let group = ServiceGroup(
        configuration: ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
    )
    return Daemon(configuration: configuration, group: group)
}

/// The bus connection: it stays open until shutdown, and a lost bus stops the daemon (systemd restarts it).
final class BusService: Service, Sendable {
    let connection: DBusConnection
    let client: BlueZClient

    init(connection: DBusConnection, client: BlueZClient) {
        self.connection = connection
        self.client = client
    }

    struct BusLost: Error, CustomStringConvertible {
        var description: String { "the D-Bus connection was lost; systoled stops so systemd can restart it" }
    }

    func run() async throws {
        await cancelWhenGracefulShutdown { await self.connection.waitUntilClosed() }
        let lost = !connection.isConnected
        client.close()
        connection.close()
        if lost, !Task.isShuttingDownGracefully { throw BusLost() }
    }
}

/// A token for the web server when `[http]` has none: 32 random bytes, URL-safe base64 (43 characters).
func makeToken() -> String {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
    return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
}

/// The store: everything saved is committed before the daemon exits.
final class StoreService: Service, Sendable {
    let store: SQLiteHealthStore

    init(store: SQLiteHealthStore) { self.store = store }

    func run() async throws {
        try? await gracefulShutdown()
        try await store.flush()
    }
}
