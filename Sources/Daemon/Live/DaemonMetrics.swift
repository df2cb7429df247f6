import CoreMetrics
import Foundation
import Prometheus
import Recording
import Synchronization

/// systoled's Prometheus metrics (`/metrics`): what is counted as it happens (readings dropped, MQTT messages
/// dropped and the broker's connection, the store's commit times) and what is read off the daemon at each scrape
/// (heart rate, battery, connection, readings and rejected notifications per sensor, the workout's state and
/// elapsed time). Every series is labelled by
/// the sensor's address, never by the name it advertises (a device in range chooses that).
final class DaemonMetrics: RecordingOutput {
    let registry = PrometheusCollectorRegistry()
    /// The store's commits, through swift-metrics (its `Timer` becomes a Prometheus histogram).
    let commitDuration: CoreMetrics.Timer
    /// Readings the pipeline's backlog dropped (the disk fell behind).
    private let droppedReadings: Prometheus.Counter
    /// Messages the MQTT queue dropped (the broker was away or slow), and whether it is connected.
    private let droppedMQTTMessages: Prometheus.Counter
    private let mqttConnected: Prometheus.Gauge
    /// The values of the counters read off the sensors at the last scrape, to add only what came since.
    private let scraped = Mutex(Scraped())

    private struct Scraped {
        var rejected: [String: Int] = [:]
        var readings: [String: Int] = [:]
        var heartRateGauges: [String: Prometheus.Gauge] = [:]
    }

    static let commitDurationName = "systole_store_commit_duration_seconds"
    static let workoutStates = ["idle", "notStarted", "prepared", "running", "paused", "stopped", "ended"]

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // A commit waits for fsync: a millisecond on an SSD, tens on an SD card, seconds on a failing disk.
        factory.durationHistogramBuckets[Self.commitDurationName] = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .seconds(5),
        ]
        commitDuration = CoreMetrics.Timer(label: Self.commitDurationName, factory: factory)
        droppedReadings = registry.makeCounter(
            descriptor: .init(
                namespace: "systole",
                metricName: "readings_dropped",
                unitName: "total",
                helpText:
                    "Readings dropped because the workout could not save them fast enough (a slow or stalled disk)"
            )
        )
        droppedMQTTMessages = registry.makeCounter(
            descriptor: .init(
                namespace: "systole",
                metricName: "mqtt_messages_dropped",
                unitName: "total",
                helpText: "MQTT messages dropped from the full queue while the broker was away or slow"
            )
        )
        mqttConnected = registry.makeGauge(
            descriptor: .init(
                namespace: "systole",
                metricName: "mqtt_connected",
                unitName: "",
                helpText: "1 while systoled is connected to its MQTT broker ([mqtt])"
            )
        )
    }

    func mqttMessagesDropped(_ count: Int) { droppedMQTTMessages.increment(by: Int64(count)) }

    func mqttConnection(_ connected: Bool) { mqttConnected.set(to: connected ? 1 : 0) }

    /// Readings the recording pipeline's hand-off dropped (its backlog was full).
    func didDrop(_ count: Int) { droppedReadings.increment(by: Int64(count)) }

    /// The exposition: the scrape-time values set first, then everything in the text format.
    func exposition(snapshot: WorkoutSnapshot, sensors: [SensorStatus], showsHeartRate: Bool) -> [UInt8] {
        scraped.withLock { scraped in
            for state in Self.workoutStates {
                registry.makeGauge(
                    descriptor: .init(
                        namespace: "systole",
                        metricName: "workout_state",
                        unitName: "",
                        helpText: "1 for the workout's state now (idle without a workout), 0 for the others"
                    ),
                    labels: [("state", state)]
                ).set(to: snapshot.stateName == state ? 1 : 0)
            }
            registry.makeGauge(
                descriptor: .init(
                    namespace: "systole",
                    metricName: "workout_elapsed",
                    unitName: "seconds",
                    helpText: "The workout's elapsed time without pauses (0 without a workout)"
                )
            ).set(to: snapshot.workoutID == nil ? 0 : snapshot.elapsed)
            for sensor in sensors {
                guard let address = sensor.address else { continue }
                let labels = [("sensor", address)]
                registry.makeGauge(
                    descriptor: .init(
                        namespace: "systole",
                        metricName: "sensor_connected",
                        unitName: "",
                        helpText: "1 while the sensor is connected"
                    ),
                    labels: labels
                ).set(to: sensor.isConnected ? 1 : 0)
                if let battery = sensor.batteryPercent {
                    registry.makeGauge(
                        descriptor: .init(
                            namespace: "systole",
                            metricName: "sensor_battery",
                            unitName: "percent",
                            helpText: "The sensor's battery level"
                        ),
                        labels: labels
                    ).set(to: Double(battery))
                }
                // The heart rate only while the sensor streams one: a stale value would hide a lost strap.
                if showsHeartRate, sensor.isConnected, let bpm = sensor.lastHeartRate {
                    let gauge = registry.makeGauge(
                        descriptor: .init(
                            namespace: "systole",
                            metricName: "heart_rate",
                            unitName: "bpm",
                            helpText: "The sensor's latest heart rate, while it is connected"
                        ),
                        labels: labels
                    )
                    gauge.set(to: Double(bpm))
                    scraped.heartRateGauges[address] = gauge
                } else if let gauge = scraped.heartRateGauges.removeValue(forKey: address) {
                    registry.unregisterGauge(gauge)
                }
                // Counted where the sensors' statuses are kept, and added here since the last scrape: nothing is
                // done per reading for /metrics.
                let readings = registry.makeCounter(
                    descriptor: .init(
                        namespace: "systole",
                        metricName: "readings",
                        unitName: "total",
                        helpText: "Heart-rate readings taken from the sensor (decoded and within their ranges)"
                    ),
                    labels: labels
                )
                let newReadings = sensor.readings - (scraped.readings[address] ?? 0)
                if newReadings > 0 { readings.increment(by: Int64(newReadings)) }
                scraped.readings[address] = max(sensor.readings, scraped.readings[address] ?? 0)
                let rejected = sensor.rejected
                for (reason, count) in [
                    ("malformed", rejected.malformed), ("out_of_range", rejected.outOfRange),
                    ("excess_beats", rejected.excessBeats), ("throttled", rejected.throttled),
                ] {
                    let key = address + "/" + reason
                    let counter = registry.makeCounter(
                        descriptor: .init(
                            namespace: "systole",
                            metricName: "notifications_rejected",
                            unitName: "total",
                            helpText: "Notifications not turned into readings, per sensor and reason"
                        ),
                        labels: [("sensor", address), ("reason", reason)]
                    )
                    let new = count - (scraped.rejected[key] ?? 0)
                    if new > 0 { counter.increment(by: Int64(new)) }
                    scraped.rejected[key] = max(count, scraped.rejected[key] ?? 0)
                }
            }
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(8192)
        registry.emit(into: &buffer)
        return buffer
    }
}
