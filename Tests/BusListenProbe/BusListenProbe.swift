import DBus
import Foundation
import Synchronization

/// `bus-listen-probe ADDRESS SECONDS [READY_FILE STOP_FILE]`: what any local user can do on a bus: connect, ask for
/// every `PropertiesChanged` signal under `/org/systole` with a plain `AddMatch` (no eavesdropping), and print each
/// one that arrives as `signal SENDER PATH MEMBER ARGUMENTS` until SECONDS pass, or until STOP_FILE exists; then
/// `received N`. READY_FILE is made once the match is in place, so a test knows the probe hears what follows. The
/// policy test runs it as an unprivileged user, as root and as a group member.
@main
enum BusListenProbe {
    /// Writes a line at once (standard output may be a pipe).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3 || arguments.count == 5, let seconds = Double(arguments[2]), seconds > 0,
            seconds < 600
        else {
            FileHandle.standardError.write(
                Data("usage: bus-listen-probe ADDRESS SECONDS [READY_FILE STOP_FILE]\n".utf8)
            )
            exit(2)
        }
        let files = arguments.count == 5 ? (ready: arguments[3], stop: arguments[4]) : nil
        let connection = try await DBusConnection.connect(to: .address(arguments[1]))
        let count = Atomic(0)
        let subscription = try await connection.subscribe(
            to: DBusMatchRule(pathNamespace: "/org/systole", interface: "org.freedesktop.DBus.Properties")
        ) { signal in
            count.add(1, ordering: .relaxed)
            say("signal \(signal.sender) \(signal.path) \(signal.member) \(signal.arguments)")
        }
        // The match is in place once the bus answered a call made after it.
        _ = try await connection.nameOwner(of: "org.freedesktop.DBus")
        say("listening")
        if let files { _ = FileManager.default.createFile(atPath: files.ready, contents: Data()) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await subscription.ended() }
            group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
            if let files {
                group.addTask {
                    while !FileManager.default.fileExists(atPath: files.stop), !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(50))
                    }
                }
            }
            // The timer or the stop file ends it, unless the bus goes away; either way, stop listening.
            await group.next()
            group.cancelAll()
        }
        say("received \(count.load(ordering: .relaxed))")
        connection.close()
    }
}
