import DBus
import Foundation
import Synchronization

/// `bus-listen-probe ADDRESS SECONDS`: what any local user can do on a bus: connect, ask for every
/// `PropertiesChanged` signal under `/org/systole` with a plain `AddMatch` (no eavesdropping), and print each one
/// that arrives as `signal SENDER PATH MEMBER ARGUMENTS` until SECONDS pass; then `received N`. The policy test
/// runs it as an unprivileged user, as root and as a group member.
@main
enum BusListenProbe {
    /// Writes a line at once (standard output may be a pipe).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let seconds = Double(arguments[2]), seconds > 0, seconds < 600 else {
            FileHandle.standardError.write(Data("usage: bus-listen-probe ADDRESS SECONDS\n".utf8))
            exit(2)
        }
        let connection = try await DBusConnection.connect(to: .address(arguments[1]))
        let count = Atomic(0)
        let subscription = try await connection.subscribe(
            to: DBusMatchRule(pathNamespace: "/org/systole", interface: "org.freedesktop.DBus.Properties")
        ) { signal in
            count.add(1, ordering: .relaxed)
            say("signal \(signal.sender) \(signal.path) \(signal.member) \(signal.arguments)")
        }
        say("listening")
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await subscription.ended() }
            group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
            // The timer ends first unless the bus goes away; either way, stop listening.
            await group.next()
            group.cancelAll()
        }
        say("received \(count.load(ordering: .relaxed))")
        connection.close()
    }
}
