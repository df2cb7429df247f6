import Foundation
import Glibc
import SystoleTestSupport
import Testing

/// The tests' own process starter: what each program gets (its arguments, environment, streams, and no other
/// descriptor of the test process) and how its end is told.
@Suite struct ChildProcessTests {
    /// Runs `script` with /bin/sh and returns its standard output, with the process once it ended.
    func shell(_ script: String, environment: [String: String]? = nil) throws -> (String, ChildProcess) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "sh", "an argument with spaces"]
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (text, process)
    }

    @Test func theProgramGetsItsArgumentsAndEnvironmentAndItsStatusIsTold() throws {
        let (output, process) = try shell(
            #"echo "$1|$SYSTOLE_CHILD_TEST|${HOME-unset}"; exit 3"#,
            environment: [
                "SYSTOLE_CHILD_TEST": "set"
            ]
        )
        #expect(output == "an argument with spaces|set|unset\n")
        #expect(!process.isRunning)
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 3)
    }

    /// A descriptor the test process holds open without close-on-exec (another test's pipe, say) must not reach
    /// the program: a pipe's reader would wait for its end as long as the program lives.
    @Test func noDescriptorOfTheTestProcessReachesTheProgram() throws {
        var leaky: [Int32] = [-1, -1]
        #expect(pipe(&leaky) == 0)
        defer { for descriptor in leaky { close(descriptor) } }
        #expect(fcntl(leaky[1], F_GETFD) & FD_CLOEXEC == 0)
        let probes = leaky.map { "[ -e /proc/$$/fd/\($0) ] && echo \($0) open" }.joined(separator: "; ")
        let (output, process) = try shell(probes + "; echo checked")
        #expect(process.terminationStatus == 0)
        #expect(output == "checked\n", "the program had \(output)")
    }

    @Test func aProgramEndedByASignalSaysSo() throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["600"]
        try process.run()
        #expect(process.isRunning)
        process.terminate()
        process.waitUntilExit()
        #expect(!process.isRunning)
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == SIGTERM)
    }
}
