import ArgumentParser
import Foundation

extension SystoleCommand {
    /// Parses `arguments` (without the program name), runs the command, and returns the exit status, printing
    /// errors as one line each to standard error. The `systole` executable exits with what this returns.
    public static func run(arguments: [String]) async -> Int32 {
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return 0
        } catch let failure as CommandFailure {
            printError("systole: \(failure.message)")
            return failure.exitCode.rawValue
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                // --help and --version arrive as "errors" whose message is the requested text.
                print(message)
                return 0
            }
            if !message.isEmpty { printError(message) }
            return code == .validationFailure ? Exit.usage.rawValue : code.rawValue
        }
    }
}

func printError(_ line: String) {
    var line = line
    if !line.hasSuffix("\n") { line += "\n" }
    FileHandle.standardError.write(Data(line.utf8))
}
