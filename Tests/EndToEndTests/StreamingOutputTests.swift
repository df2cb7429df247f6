import Foundation
import Glibc
import SystoleTestSupport
import Testing

/// Commands that print as they go write each line at once, also when standard output is a pipe (`systole monitor
/// --json | jq`) or a file, so nothing is held back until exit and lost to Ctrl-C or `timeout`.
@Suite struct StreamingOutputTests {
    /// Starts `systole arguments` with standard output into a pipe and returns the first line it writes there
    /// while still running (nil if none arrives within `seconds`); the process is killed afterwards.
    func firstLineWhileRunning(_ arguments: [String], within seconds: Double) async throws -> (String?, Bool) {
        try await offThePool {
            let process = ChildProcess()
            process.executableURL = CommandRunner.productsDirectory.appendingPathComponent("systole")
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            defer {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            let descriptor = output.fileHandleForReading.fileDescriptor
            var received: [UInt8] = []
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline, !received.contains(UInt8(ascii: "\n")) {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 100) > 0 else { continue }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { break }
                received += buffer[..<count]
            }
            let line = received.split(separator: UInt8(ascii: "\n")).first.map { String(decoding: $0, as: UTF8.self) }
            return (line, process.isRunning)
        }
    }

    @Test(arguments: [false, true]) func monitorWritesEachMeasurementIntoAPipeAsItArrives(json: Bool) async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        // One measurement a second: a block-buffered output would hold back the first dozens of lines.
        let simulator = try await SimulatorProcess.start(bus: bus, ["--rate", "1"])
        defer { simulator.stop() }
        let address = try #require(simulator.addresses.first)
        let (line, running) = try await firstLineWhileRunning(
            ["monitor", address, "--bus", bus.address, "--seconds", "60"] + (json ? ["--json"] : []),
            within: 8
        )
        #expect(running, "monitor ended early")
        let first = try #require(line, "no measurement reached the pipe while monitor ran")
        #expect(first.contains(address))
        #expect(json ? first.hasPrefix("{") : first.contains(" bpm"))
    }
}
