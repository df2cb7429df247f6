import ArgumentParser
import BlueZ
import DBus

/// Options shared by the commands that talk to bluetoothd directly.
struct BluetoothOptions: ParsableArguments {
    @Option(help: "Bus where bluetoothd is: 'system' (default), 'session', or an address such as unix:path=/run/bus.")
    var bus = "system"

    @Option(help: ArgumentHelp("Adapter to use, e.g. hci1 (default: every powered adapter).", valueName: "hciN"))
    var adapter: String?

    func validate() throws {
        if let adapter, !adapter.hasPrefix("hci") || Int(adapter.dropFirst(3)) == nil {
            throw ValidationError("--adapter takes a name like hci0, not '\(adapter)'")
        }
    }

    /// Connects to the bus and bluetoothd, with errors that say what to do.
    func connect() async throws -> BlueZClient {
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(to: DBusBus(bus))
        } catch {
            throw CommandFailure.invalidInput("\(error.message). Is D-Bus running, and is --bus right?")
        }
        do {
            return try await BlueZClient.connect(connection)
        } catch {
            connection.close()
            throw Self.failure(error)
        }
    }

    /// The adapter the user asked for, or every powered one; or a failure naming the problem.
    func selectAdapters(_ client: BlueZClient) throws -> [Adapter] {
        do {
            return try client.poweredAdapters(named: adapter)
        } catch {
            throw Self.failure(error)
        }
    }

    /// A BlueZ error as a one-line failure with advice.
    static func failure(_ error: BlueZError) -> CommandFailure {
        switch error.kind {
        case .accessDenied:
            return .invalidInput(
                "not authorised to talk to bluetoothd on this bus (\(error.message)): run as a member of group "
                    + "'bluetooth', or as root"
            )
        default:
            return .invalidInput(error.message.isEmpty ? "\(error)" : error.message)
        }
    }
}
