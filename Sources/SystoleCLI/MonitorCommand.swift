import ArgumentParser
import BlueZ
import Foundation
import HeartRateProfile
import HeartRateSensors

/// `systole monitor [ADDRESS]`: connect to a sensor through BlueZ and print each measurement live.
struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Connect to a heart-rate sensor through bluetoothd and print each measurement, decoded.",
        discussion: """
            Without ADDRESS, uses the first heart-rate sensor seen. Reconnects when the sensor drops out. \
            Connection changes go to standard error, measurements to standard output (one line each; with \
            --json the 'decode --json' object plus 'time' and 'sensor'). Stop with Ctrl-C.

            --notify acquire takes the notifications over a socket from bluetoothd (AcquireNotify) instead of \
            D-Bus signals: the cheapest way, but exclusive: while monitor holds the sensor, no other program \
            (systoled included) can subscribe to it, and monitor cannot subscribe while another holds it so. When \
            bluetoothd or the sensor refuses it, monitor says why on standard error and uses signals.

            --ecg (and --acc RATE) also streams a Polar H10's ECG (and accelerometer) over Polar's Measurement Data \
            service, one JSON line per frame on standard output: type, sensor, time of the first sample, rate, \
            sensorTimestamp, segment (start, gap, clock-back, clock-forward or null) and microvolts (or milliG). \
            What the strap says about them goes to standard error.
            """
    )

    @Argument(help: ArgumentHelp("The sensor's address, e.g. A0:9E:1A:12:34:56.", valueName: "address"))
    var address: String?

    @OptionGroup var bluetooth: BluetoothOptions

    @Flag(help: "Print one JSON object per measurement.")
    var json = false

    @Option(help: "Stop after this many measurements.")
    var count: Int?

    @Option(help: "Stop after this many seconds.")
    var seconds: Double?

    @Option(
        help: ArgumentHelp(
            "How notifications travel: signal (StartNotify) or acquire (AcquireNotify).",
            valueName: "method"
        )
    )
    var notify: NotifyMethod = .signal

    @Flag(help: "Also stream a Polar H10's ECG (µV, JSON lines on standard output).")
    var ecg = false

    @Option(
        help: ArgumentHelp(
            "Also stream a Polar H10's accelerometer at this rate: 25, 50, 100 or 200 Hz (±8 G).",
            valueName: "hz"
        )
    )
    var acc: UInt32?

    func validate() throws {
        if let acc, ![25, 50, 100, 200].contains(acc) {
            throw ValidationError("--acc must be 25, 50, 100 or 200 (Hz), got \(acc)")
        }
        if let address {
            do {
                _ = try BluetoothAddress(address)
            } catch {
                throw ValidationError("\(error)")
            }
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let seconds, seconds <= 0 { throw ValidationError("--seconds must be positive") }
    }

    func run() async throws {
        let client = try await bluetooth.connect()
        defer {
            client.close()
            client.connection.close()
        }
        // Checked here so that a missing adapter is an error at once, not a reconnect loop.
        _ = try bluetooth.selectAdapters(client)
        let agent = PairingAgent()
        do {
            try await agent.register(with: client)
        } catch  where error.kind == .alreadyExists {
            // Another agent of ours is registered on this connection; pairing still works.
        } catch {
            printError("systole: warning: could not register a pairing agent (\(error)); pairing may fail")
        }
        let target: SensorTarget = try address.map { .address(try BluetoothAddress($0)) } ?? .anyHeartRateSensor
        var options = HeartRateSensor.Options(adapter: bluetooth.adapter)
        options.agent = agent
        options.discoveryTimeout = .seconds(10)
        options.notify = notify
        if ecg || acc != nil {
            options.pmd = PMDOptions(ecg: ecg, accelerometer: acc.map { PMDOptions.Accelerometer(rate: $0, range: 8) })
        }
        let stream = HeartRateSensorEventStream()
        let sensor = HeartRateSensor(client: client, target: target, options: options, delegate: stream)
        sensor.measurePMD(options.pmd != nil)
        let runner = Task { await sensor.run() }
        let timer = seconds.map { limit in
            Task {
                try? await Task.sleep(for: .seconds(limit))
                runner.cancel()
            }
        }
        defer { timer?.cancel() }
        do {
            try await printEvents(of: stream, target: target)
        } catch {
            await stop(runner)
            throw error
        }
        await stop(runner)
    }

    /// Stops the sensor and waits for it: a strap streaming ECG is told to stop first (a strap left streaming takes
    /// a while to start again), which takes at most a second per measurement.
    private func stop(_ runner: Task<Void, Never>) async {
        runner.cancel()
        await runner.value
    }

    private func printEvents(of stream: HeartRateSensorEventStream, target: SensorTarget) async throws {
        var printed = 0
        var streamed = false
        var unreported: [RejectionReason: Int] = [:]
        var lastRejectionLine: [RejectionReason: ContinuousClock.Instant] = [:]
        for await event in stream.events {
            switch event {
            case .state(let state):
                printError("systole: \(state)")
                if case .streaming = state { streamed = true }
                if case .disconnected(let reason) = state, !streamed {
                    throw CommandFailure.invalidInput("cannot monitor \(target): \(reason)")
                }
            case .identified(let address, let name, let maker):
                printError("systole: sensor \(address) \([name, maker].compactMap { $0 }.joined(separator: " · "))")
            case .bodySensorLocation(let location):
                printError("systole: body sensor location: \(location)")
            case .batteryLevel(let level):
                printError("systole: battery: \(level)")
            case .energyExpendedReset:
                printError("systole: energy expended reached 65535 kJ; reset it on the sensor")
            case .notifying(let method, let reason):
                let how = method == .acquire ? "AcquireNotify (a socket past the message bus)" : "D-Bus signals"
                printError("systole: notifications over \(how)" + (reason.map { " (\($0))" } ?? ""))
            case .malformed(let payload, let error):
                printError("systole: skipped a malformed measurement \(Hex.encode(payload)): \(error)")
            case .rejected(let reason, let count, let detail):
                // A flooding device would flood the terminal too: a line per reason every five seconds at most.
                unreported[reason, default: 0] += count
                let now = ContinuousClock.now
                if let last = lastRejectionLine[reason], now - last < .seconds(5) { break }
                lastRejectionLine[reason] = now
                let total = unreported.removeValue(forKey: reason) ?? count
                printError("systole: rejected \(total) (\(reason.rawValue)): \(detail)")
            case .pmd(let event):
                printError("systole: \(Self.describe(event))")
            case .pmdReading(let reading):
                print(PMDFrameJSON(reading: reading).encodedLine())
            case .reading(let reading):
                print(line(for: reading))
                printed += 1
                if let count, printed >= count { return }
            }
        }
    }

    private static func describe(_ event: PMDEvent) -> String {
        switch event {
        case .started(let type): "\(type) started"
        case .refused(let type, let reason): "\(type) refused: \(reason)"
        case .stopped(let type, let reason): "\(type) stopped: \(reason)"
        case .frameRejected(let reason): "skipped a PMD frame: \(reason)"
        case .duplicateFrame: "dropped a repeated PMD frame"
        }
    }

    private func line(for reading: HeartRateReading) -> String {
        let time = MeasurementJSON.timestamp(reading.receivedDate)
        if json {
            return MeasurementJSON(reading.measurement, time: time, sensor: reading.sensor.description).encodedLine()
        }
        return "\(time) \(reading.sensor) \(MeasurementText.line(for: reading.measurement))"
    }
}

extension NotifyMethod: ExpressibleByArgument {}
