import ArgumentParser
import ControlAPI
import DBus
import Foundation

/// Options of every command that talks to systoled.
struct ControlOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Bus where systoled is: 'system' (default, or $SYSTOLE_BUS), 'session', or an address (unix:path=…).",
            valueName: "bus"
        )
    )
    var bus: String = ProcessInfo.processInfo.environment["SYSTOLE_BUS"].flatMap { $0.isEmpty ? nil : $0 } ?? "system"

    /// Connects to systoled's bus, with errors that say what to do.
    func connect() async throws -> DaemonClient {
        do {
            return DaemonClient(connection: try await DBusConnection.connect(to: DBusBus(bus)), bus: bus)
        } catch {
            throw CommandFailure.invalidInput(
                "cannot connect to the \(bus) bus: \(error.message). Is D-Bus running, and is --bus right?"
            )
        }
    }
}

/// Calls systoled's control API, turning D-Bus errors into one-line failures that say what to do.
struct DaemonClient {
    let connection: DBusConnection
    let bus: String

    func call(
        _ method: String,
        _ arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws
        -> [DBusValue]
    {
        do {
            return try await connection.call(
                destination: ControlAPI.busName,
                path: ControlAPI.objectPath,
                interface: ControlAPI.interface,
                method: method,
                arguments: arguments,
                timeout: timeout
            )
        } catch {
            throw failure(error)
        }
    }

    /// A property of the control interface.
    func property(_ name: String) async throws -> DBusValue {
        do {
            let reply = try await connection.call(
                destination: ControlAPI.busName,
                path: ControlAPI.objectPath,
                interface: "org.freedesktop.DBus.Properties",
                method: "Get",
                arguments: [.string(ControlAPI.interface), .string(name)]
            )
            return reply.first?.unwrapped ?? .propertyMap([:])
        } catch {
            throw failure(error)
        }
    }

    func failure(_ error: DBusError) -> CommandFailure {
        switch error.name {
        case DBusError.Name.serviceUnknown.rawValue, DBusError.Name.nameHasNoOwner.rawValue:
            let how =
                bus == "system"
                ? "start it with 'sudo systemctl start systoled'"
                : "start it with 'systoled --bus \(bus)'"
            return .invalidInput("systoled is not running on the \(bus) bus: \(how)")
        case DBusError.Name.accessDenied.rawValue:
            return .invalidInput(
                "not permitted to control systoled: add yourself to group 'systole' "
                    + "('sudo usermod -aG systole $USER', then log in again), or run as root"
            )
        case DBusError.Name.noReply.rawValue, DBusError.Name.timeout.rawValue:
            return .invalidInput("systoled did not answer in time (\(error.message)); check 'journalctl -u systoled'")
        default:
            return .invalidInput(error.message.isEmpty ? error.name : error.message)
        }
    }
}

/// Reading `a{sv}` replies.
extension DBusValue {
    /// The entries of an `a{sv}`, variants unwrapped.
    var map: [String: DBusValue] {
        var result: [String: DBusValue] = [:]
        for entry in array ?? [] {
            if case .dictEntry(let key, let value) = entry, let name = key.string { result[name] = value.unwrapped }
        }
        return result
    }

    /// A number of any D-Bus numeric type.
    var number: Double? {
        if let double { return double }
        return int64.map(Double.init)
    }

    /// The value as JSON-ready Foundation objects (for `--json`).
    var jsonObject: Any {
        switch unwrapped {
        case .boolean(let value): return value
        case .string(let text), .objectPath(let text), .signature(let text): return text
        case .double(let value): return value.isFinite ? value : NSNull()
        case .array(.dictEntry, _): return map.mapValues(\.jsonObject)
        case .array(_, let values): return values.map(\.jsonObject)
        case .structure(let values): return values.map(\.jsonObject)
        default: return int64 ?? NSNull()
        }
    }
}

/// Prints `object` as pretty JSON with sorted keys.
func printJSON(_ object: Any) {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    print(String(decoding: data, as: UTF8.self))
}
