import ArgumentParser

/// A failure a command reports to the user as one line on standard error, with the exit status it implies.
///
/// Conventions (see `systole --help`): 1 means the input was understood but is not valid; 2 means the command
/// was used wrongly.
struct CommandFailure: Error, CustomStringConvertible {
    /// The line to print, without the program name.
    var message: String
    /// The process exit status.
    var exitCode: ExitCode

    /// The input was understood but is not valid (exit status 1).
    static func invalidInput(_ message: String) -> CommandFailure {
        CommandFailure(message: message, exitCode: .failure)
    }

    /// The command was used wrongly (exit status 2).
    static func usage(_ message: String) -> CommandFailure {
        CommandFailure(message: message, exitCode: Exit.usage)
    }

    var description: String { message }
}

/// Exit statuses shared by every command.
public enum Exit {
    /// Usage error, as getopt-style tools use it. ArgumentParser's own default is 64 (EX_USAGE); systole uses 2
    /// throughout so scripts see one convention.
    public static let usage = ExitCode(2)
}
