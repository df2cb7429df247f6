import ControlAPI
import DBus
import Recording
import SafeText

/// What every part of the control API does with a call: reads its text arguments, and turns refusals into the
/// API's D-Bus errors.
enum ControlCall {
    /// Runs a workout command, turning its refusal into the matching D-Bus error.
    static func command<T>(
        _ body: () async throws(WorkoutCommandError) -> T
    ) async throws(DBusError) -> T {
        do {
            return try await body()
        } catch {
            throw DBusError(name: error.kind.errorName, message: error.message)
        }
    }

    static func storeCall<T>(_ body: () async throws -> T) async throws(DBusError) -> T {
        do {
            return try await body()
        } catch {
            throw DBusError(name: ControlAPI.ErrorName.store, message: "\(error)")
        }
    }

    /// The refusal of a name the caller gave that is none of `known`.
    static func unknown(_ what: String, _ given: String, known: [String]) -> DBusError {
        DBusError(
            name: ControlAPI.ErrorName.invalidArguments,
            message: "unknown \(what) \(given.quotedExcerpt()); known: \(known.joined(separator: ", "))"
        )
    }

    static func text(_ call: DBusMethodCall, _ index: Int, _ expected: String) throws(DBusError) -> String {
        guard let text = try call.argument(index, expected).string else {
            throw DBusError(.invalidArgs, "\(call.member) expects \(expected) as argument \(index + 1)")
        }
        return text
    }
}

/// A part of the control API that adds its methods to the interface, as a Hummingbird controller adds its routes
/// to a router: each part holds what its methods need and nothing else.
protocol ControlMethods: Sendable {
    func addMethods(to methods: inout [DBusMethod])
}
