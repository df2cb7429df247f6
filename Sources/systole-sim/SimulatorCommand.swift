import ArgumentParser
import BlueZSimulator
import DBus
import Foundation

/// `systole-sim`: plays bluetoothd's org.bluez API with simulated heart-rate sensors on a bus of your choice.
@main
struct SimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "systole-sim",
        abstract: "Simulate bluetoothd (org.bluez) with heart-rate sensors, for tests and demos.",
        discussion: """
            Runs on the bus given with --bus (an address such as unix:path=/tmp/bus), else on the session bus. \
            It refuses the system bus, where the real bluetoothd lives, unless --system is given.
            Prints 'ready' and one line per sensor (address, model, name) once org.bluez is taken.
            SIGUSR1 restarts the simulated bluetoothd (stopped as SIGTERM stops bluetoothd, back after 1 s).
            """
    )

    @Option(help: "Bus address (unix:path=…), 'session', or 'system' (needs --system).")
    var bus: String?

    @Flag(help: "Allow running on the system bus (where the real bluetoothd normally is).")
    var system = false

    @Option(help: "Number of sensors (without --scenario).")
    var sensors: Int?

    @Option(help: "Device model: polar-h10, garmin-hrm, wahoo-tickr, powerbeats-pro-2, keyboard (without --scenario).")
    var model: SensorModel?

    @Option(help: "Heart-rate profile: steady, ramp or intervals (without --scenario).")
    var profile: Scenario.ProfileSpec.Kind?

    @Option(help: "Notifications per second per sensor (without --scenario).")
    var rate: Double?

    @Option(help: "Seed for every random choice; the same seed plays the same payloads.")
    var seed: UInt64?

    @Option(help: "A JSON scenario file (sensors, profiles, faults); see docs/simulator.md.")
    var scenario: String?

    @Option(
        help: """
            A built-in scenario: hostile-neighbour (an honest strap beside a hostile device); see docs/simulator.md.
            """
    )
    var preset: Scenario.Preset?

    @Flag(help: "Give every Polar H10 Polar's Measurement Data service (ECG and accelerometer), as real H10s have.")
    var pmd = false

    @Option(
        help: """
            A file of ECG values in µV (numbers separated by white space or commas) that every H10 with PMD plays             at its ECG rate instead of a synthesized ECG (implies --pmd).
            """
    )
    var ecgFile: String?

    @Flag(help: "Print the scenario (from --scenario, --preset or the flags) as JSON and exit.")
    var printScenario = false

    @Option(help: "Write every emitted notification as JSON lines (time, sensor, payload hex) to this file.")
    var emitLog: String?

    @Option(help: "Exit after this many seconds (default: run until SIGINT/SIGTERM).")
    var duration: Double?

    func validate() throws {
        if scenario != nil || preset != nil, sensors != nil || model != nil || profile != nil || rate != nil {
            throw ValidationError(
                "--sensors, --model, --profile and --rate describe the sensors without a scenario; "
                    + "with --scenario, put them in the file (for a preset, --print-scenario writes one)"
            )
        }
        if scenario != nil, preset != nil { throw ValidationError("--scenario and --preset each give a scenario") }
        if let sensors, !(1...10_000).contains(sensors) { throw ValidationError("--sensors must be 1…10000") }
        if bus == "system", !system {
            throw ValidationError(
                "refusing the system bus: the real bluetoothd lives there. Pass --system if you really mean it"
            )
        }
    }

    func makeScenario() throws -> Scenario {
        var result: Scenario
        if let scenario {
            result = try Scenario.load(path: scenario)
        } else if let preset {
            result = preset.scenario
        } else {
            result = Scenario()
            var spec = Scenario.SensorSpec(model: model ?? .polarH10, count: sensors ?? 1)
            spec.profile = Scenario.ProfileSpec(kind: profile ?? .steady)
            spec.rate = rate
            result.sensors = [spec]
        }
        if let seed { result.seed = seed }
        if pmd || ecgFile != nil {
            for index in result.sensors.indices where result.sensors[index].model == .polarH10 {
                var spec = result.sensors[index].pmd ?? PMDSpec()
                if let ecgFile { spec.ecgFile = ecgFile }
                result.sensors[index].pmd = spec
            }
        }
        try result.validate()
        return result
    }

    func run() async throws {
        let scenario: Scenario
        do {
            scenario = try makeScenario()
        } catch {
            throw ValidationError("\(error)")
        }
        if printScenario {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            FileHandle.standardOutput.write(try encoder.encode(scenario) + Data("\n".utf8))
            return
        }
        let target: DBusBus = bus.map(DBusBus.init) ?? .session
        let simulator = try BlueZSimulator(scenario: scenario, bus: target, emitLogPath: emitLog)
        do {
            try await simulator.start()
        } catch {
            FileHandle.standardError.write(Data("systole-sim: \(error)\n".utf8))
            throw ExitCode(1)
        }
        var lines = ["ready on \(target) as org.bluez"]
        let addresses = await simulator.sensorAddresses
        for (index, address) in addresses.enumerated() {
            lines.append("sensor \(index) \(address)")
        }
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        await waitForEnd { try? await simulator.restartBluetoothd(downtime: .seconds(1)) }
        await simulator.stop()
    }

    /// Until SIGINT/SIGTERM or --duration; `restart` on each SIGUSR1.
    private func waitForEnd(restart: @escaping @Sendable () async -> Void) async {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        signal(SIGUSR1, SIG_IGN)
        let stream = AsyncStream<Void> { continuation in
            let sources = SignalSources()
            for number in [SIGINT, SIGTERM] {
                let source = DispatchSource.makeSignalSource(signal: number)
                source.setEventHandler { continuation.yield() }
                source.resume()
                sources.sources.append(source)
            }
            // Scripts restart bluetoothd this way (scripts/real-bluez/against-sim.sh), as they would with pkill.
            let restarts = DispatchSource.makeSignalSource(signal: SIGUSR1)
            restarts.setEventHandler { Task { await restart() } }
            restarts.resume()
            sources.sources.append(restarts)
            continuation.onTermination = { _ in
                for source in sources.sources { source.cancel() }
            }
            if let duration {
                Task {
                    try? await Task.sleep(for: .seconds(duration))
                    continuation.yield()
                }
            }
        }
        for await _ in stream { return }
    }
}

/// Keeps the signal sources alive for as long as the wait lasts.
final class SignalSources: @unchecked Sendable {
    var sources: [any DispatchSourceSignal] = []
}

extension SensorModel: ExpressibleByArgument {}
extension Scenario.ProfileSpec.Kind: ExpressibleByArgument {}
extension Scenario.Preset: ExpressibleByArgument {}
