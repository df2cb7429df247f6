import DBus

/// A pairing agent (`org.bluez.Agent1`) with capability `NoInputNoOutput`: Just Works pairing, as heart-rate
/// straps and earbuds without a keypad or display expect. It accepts confirmations and authorisations and
/// refuses requests for a PIN or passkey it could not know.
public final class PairingAgent: Sendable {
    /// Where the agent is exported unless told otherwise.
    public static let defaultPath = "/org/systole/agent"
    public static let capability = "NoInputNoOutput"

    public let path: String
    private let object: DBusObject

    public init(path: String = PairingAgent.defaultPath) {
        self.path = path
        object = DBusObject(path: path)
        object.addInterface(makeInterface())
    }

    /// Exports the agent on the client's connection, registers it and makes it the default agent (so pairing
    /// requests not started by us reach it too).
    public func register(with client: BlueZClient) async throws(BlueZError) {
        client.connection.export(object)
        _ = try await client.connection.callBlueZ(
            BlueZ.rootPath,
            BlueZ.Interface.agentManager,
            "RegisterAgent",
            [.objectPath(path), .string(Self.capability)]
        )
        _ = try await client.connection.callBlueZ(
            BlueZ.rootPath,
            BlueZ.Interface.agentManager,
            "RequestDefaultAgent",
            [.objectPath(path)]
        )
    }

    /// Unregisters the agent and removes it from the bus.
    public func unregister(from client: BlueZClient) async {
        _ = try? await client.connection.callBlueZ(
            BlueZ.rootPath,
            BlueZ.Interface.agentManager,
            "UnregisterAgent",
            [.objectPath(path)]
        )
        client.connection.unexport(path: path)
    }

    private func makeInterface() -> DBusInterface {
        func accept(_ name: String, _ inputs: [(name: String, type: DBusType)]) -> DBusMethod {
            DBusMethod(name, inputs: inputs) { _ in [] }
        }
        func reject(
            _ name: String,
            _ inputs: [(name: String, type: DBusType)],
            _ outputs: [(name: String, type: DBusType)]
        ) -> DBusMethod {
            DBusMethod(name, inputs: inputs, outputs: outputs) { _ throws(DBusError) in
                throw DBusError(
                    name: "org.bluez.Error.Rejected",
                    message: "systole's agent has no input: it cannot supply a PIN or passkey"
                )
            }
        }
        return DBusInterface(
            BlueZ.Interface.agent,
            methods: [
                accept("Release", []),
                reject("RequestPinCode", [("device", .objectPath)], [("pincode", .string)]),
                accept("DisplayPinCode", [("device", .objectPath), ("pincode", .string)]),
                reject("RequestPasskey", [("device", .objectPath)], [("passkey", .uint32)]),
                accept("DisplayPasskey", [("device", .objectPath), ("passkey", .uint32), ("entered", .uint16)]),
                accept("RequestConfirmation", [("device", .objectPath), ("passkey", .uint32)]),
                accept("RequestAuthorization", [("device", .objectPath)]),
                accept("AuthorizeService", [("device", .objectPath), ("uuid", .string)]),
                accept("Cancel", []),
            ]
        )
    }
}
