import BlueZ
import CDBus
import DBus
import Foundation
import Glibc
import HeartRateSensors

/// `systole-sensor-ingest`: one consumer for `Benchmarks/sensor-ingest.sh`.
///
///   systole-sensor-ingest null BUS WARMUP SECONDS
///       A raw libdbus loop that only counts PropertiesChanged signals from org.bluez (the bus limit).
///   systole-sensor-ingest sensors BUS WARMUP SECONDS ADDRESS…
///       A HeartRateSensor per address (connect, StartNotify, decode, beat timeline), counting readings.
///
/// Both print one JSON line: notifications counted and CPU seconds used in the measured window (after the
/// warm-up), so the script can compare them side by side.
@main
enum SensorIngest {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count >= 5, let warmup = Double(arguments[3]), let seconds = Double(arguments[4]) else {
            FileHandle.standardError.write(
                Data("usage: systole-sensor-ingest null|sensors BUS WARMUP SECONDS [ADDRESS…]\n".utf8)
            )
            exit(2)
        }
        switch arguments[1] {
        case "null": nullConsumer(bus: arguments[2], warmup: warmup, seconds: seconds)
        case "sensors":
            await sensors(bus: arguments[2], warmup: warmup, seconds: seconds, addresses: Array(arguments[5...]))
        default:
            FileHandle.standardError.write(Data("unknown mode \(arguments[1])\n".utf8))
            exit(2)
        }
    }

    /// User + system CPU seconds of this process.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    static func peakRSSKiB() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss
    }

    static func report(_ mode: String, count: Int, cpu: Double, seconds: Double) {
        let perNotification = count > 0 ? cpu / Double(count) * 1e6 : 0
        let line =
            "{\"consumer\":\"\(mode)\",\"notifications\":\(count),\"seconds\":\(seconds),\"cpuSeconds\":\(cpu),"
            + "\"cpuMicrosecondsPerNotification\":\(perNotification),\"peakRSSKiB\":\(peakRSSKiB())}\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    // MARK: Null consumer

    static func nullConsumer(bus: String, warmup: Double, seconds: Double) {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        guard let connection = dbus_connection_open_private(bus, &error), dbus_bus_register(connection, &error) != 0
        else {
            FileHandle.standardError.write(Data("cannot connect to \(bus)\n".utf8))
            exit(1)
        }
        dbus_bus_add_match(
            connection,
            "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'",
            &error
        )
        let start = Date()
        var measuring = false
        var count = 0
        var cpuAtStart = 0.0
        while true {
            let elapsed = Date().timeIntervalSince(start)
            if !measuring, elapsed >= warmup {
                measuring = true
                count = 0
                cpuAtStart = cpuSeconds()
            }
            if elapsed >= warmup + seconds { break }
            guard dbus_connection_read_write(connection, 100) != 0 else { break }
            while let message = dbus_connection_pop_message(connection) {
                if dbus_message_is_signal(message, "org.freedesktop.DBus.Properties", "PropertiesChanged") != 0 {
                    count += 1
                }
                dbus_message_unref(message)
            }
        }
        report("null", count: count, cpu: cpuSeconds() - cpuAtStart, seconds: seconds)
        dbus_connection_close(connection)
    }

    // MARK: HeartRateSensor consumer

    static func sensors(bus: String, warmup: Double, seconds: Double, addresses: [String]) async {
        do {
            // The bus read once per 75 ms tick, as systoled does, so this measures the daemon's BlueZ layer.
            let connection = try await DBusConnection.connect(to: .address(bus), coalescing: .milliseconds(75))
            let client = try await BlueZClient.connect(connection)
            let adapter = try client.adapter(named: nil)
            // One discovery for all, so the sensors find known devices instead of racing their own.
            try await adapter.setDiscoveryFilter(uuids: [.heartRateService])
            try await adapter.startDiscovery()
            while adapter.devices.count < addresses.count { try await Task.sleep(for: .milliseconds(50)) }
            try await adapter.stopDiscovery()
            let counter = Counter()
            var tasks: [Task<Void, Never>] = []
            for address in addresses {
                // Floods on purpose (--rate): the per-sensor rate bound would throttle it.
                var options = HeartRateSensor.Options()
                options.limits.notificationsPerSecond = 100_000
                options.limits.notificationBurst = 100_000
                let stream = HeartRateSensorEventStream()
                let sensor = HeartRateSensor(
                    client: client,
                    target: .address(try BluetoothAddress(address)),
                    options: options,
                    delegate: stream
                )
                tasks.append(Task { await sensor.run() })
                tasks.append(
                    Task {
                        for await event in stream.events {
                            if case .reading = event { counter.add() }
                        }
                    }
                )
            }
            try await Task.sleep(for: .seconds(warmup))
            let cpuAtStart = cpuSeconds()
            let countAtStart = counter.value
            try await Task.sleep(for: .seconds(seconds))
            let count = counter.value - countAtStart
            report("HeartRateSensor", count: count, cpu: cpuSeconds() - cpuAtStart, seconds: seconds)
            for task in tasks { task.cancel() }
        } catch {
            FileHandle.standardError.write(Data("sensors consumer failed: \(error)\n".utf8))
            exit(1)
        }
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
