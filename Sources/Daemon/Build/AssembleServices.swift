import BlueZ
import DBus
import Foundation
import LiveWeb
import Logging
import MQTTBridge
import Recording
import Replication
import ServiceLifecycle
import SystoledConfiguration
import WorkoutKit

extension DaemonResources {
    /// systoled's services on what is open, in the order they start; they stop in reverse, so systemd hears
    /// STOPPING first and the bus and the store go last. Takes the control API's name on the way.
    func assembleServices(
        clock: any WorkoutClock,
        environment: [String: String]
    ) async throws(DaemonStartError) -> [any Service] {
        let sensors = makeSensorManager()
        let workouts = WorkoutManager(
            store: store,
            readings: sensors.readings,
            sensorStatuses: { sensors.sensors },
            measureWaveforms: { sensors.measureWaveforms($0) },
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
        let liveLogService = makeLiveLogService(workouts: workouts)
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
        let notifier = NotifierService(
            notifier: SystemdNotifier(environment: environment),
            workouts: workouts,
            logger: logger
        )
        return [
            BusService(connection: connection, client: client), StoreService(store: store), sensors, pipeline,
            liveLogService, control,
        ] + liveOutputs(live, replicator: replicator, web: web) + [notifier]
    }

    private func makeSensorManager() -> SensorManager {
        SensorManager(
            client: client,
            targets: configuration.sensors.map(\.target),
            adapter: configuration.adapter,
            notificationLimit: configuration.notificationLimit,
            athletes: configuration.athletes,
            notify: configuration.bluetooth.notify,
            notifyBySensor: configuration.bluetooth.notifyBySensor,
            pmd: configuration.ecg.defaultOptions,
            pmdBySensor: configuration.ecg.optionsBySensor,
            logger: logger
        )
    }

    /// The live log; its quiet lines are timed on the bus's loop thread.
    private func makeLiveLogService(workouts: WorkoutManager) -> LiveLogService {
        let connection = connection
        return LiveLogService(
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
    }

    /// The live outputs the configuration turns on: the live source always; MQTT, replication and the web page
    /// when their tables are there.
    private func liveOutputs(
        _ live: DaemonLiveSource,
        replicator: Replicator?,
        web: LiveWebConfiguration?
    ) -> [any Service] {
        var outputs: [any Service] = [live]
        if let mqtt = configuration.mqtt {
            let metrics = metrics
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
        return outputs
    }
}

/// A token for the web server when `[http]` has none: 32 random bytes, URL-safe base64 (43 characters).
func makeToken() -> String {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
    return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
}
