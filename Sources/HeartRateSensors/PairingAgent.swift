import BlueZ
import DBus
import HeartRateProfile
import Synchronization

/// A pairing agent (`org.bluez.Agent1`) with capability `NoInputNoOutput` that accepts only the pairing its owner
/// starts, and nothing else.
///
/// Registered (``register(with:)``), it is not bluetoothd's default agent: bluetoothd routes to it only what
/// concerns pairing started by a `Pair()` on its own connection. ``pair(_:timeout:)`` opens a window for one device:
/// the agent becomes the default agent (so the other side of that pairing can be answered too, see below), accepts
/// `RequestConfirmation`, `RequestAuthorization` and `AuthorizeService` for that device only, and then gives the
/// default back. Outside a window, and for any other device, those requests are rejected
/// (`org.bluez.Error.Rejected`): a device that starts pairing on its own, or asks for a service, is never let in
/// behind the user's back. `AuthorizeService` for HID (0x1124) or HID over GATT (0x1812) is always rejected: a
/// keyboard accepted silently could type for whoever controls it. PIN codes and passkeys are refused (there is
/// nobody to type or read them).
///
/// The window also accepts a request about the device whose address is the pairing adapter's own, on another
/// adapter. When the sensor is played by a second controller of the same machine (the project's real-stack test
/// VM: one bluetoothd with both), bluetoothd asks the default agent to authorise the peripheral side of the very
/// pairing we started; that device is our own adapter seen from the other one.
public final class PairingAgent: Sendable {
    /// Where the agent is exported unless told otherwise.
    public static let defaultPath = "/org/systole/agent"
    public static let capability = "NoInputNoOutput"
    /// Services never authorised: HID (0x1124) and HID over GATT (0x1812).
    public static let inputServices: Set<BluetoothUUID> = [BluetoothUUID(0x1124), BluetoothUUID(0x1812)]

    public let path: String
    private let object: DBusObject
    private let rules: Rules
    private let turns = Turns()

    /// - Parameter onRefusal: told, with the reason, about every request the agent rejects (for the journal).
    public init(path: String = PairingAgent.defaultPath, onRefusal: (@Sendable (String) -> Void)? = nil) {
        self.path = path
        rules = Rules(onRefusal: onRefusal)
        object = DBusObject(path: path)
        object.addInterface(Self.makeInterface(rules))
    }

    /// Exports the agent on the client's connection and registers it, without making it the default agent.
    public func register(with client: BlueZClient) async throws(BlueZError) {
        client.connection.export(object)
        try await registerAgent(client)
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

    /// Whether a pairing window is open (``pair(_:timeout:)`` is under way).
    public var isPairing: Bool { rules.window.withLock { $0 != nil } }

    /// Pairs `device` (nothing to do if it is paired already), with this agent as the default agent meanwhile,
    /// accepting requests for that device only. One pairing at a time: a second waits for the first to end.
    /// Afterwards the agent stays registered but is no longer the default; the agent that was the default before
    /// is again.
    public func pair(_ device: BluetoothDevice, timeout: Duration = .seconds(60)) async throws(BlueZError) {
        await turns.acquire()
        do {
            try await pairInWindow(device, timeout: timeout)
        } catch {
            await turns.release()
            throw error
        }
        await turns.release()
    }

    private func pairInWindow(_ device: BluetoothDevice, timeout: Duration) async throws(BlueZError) {
        if device.isPaired { return }
        let client = device.client
        let adapter = device.adapterPath.map { Adapter(client: client, path: $0) }
        rules.window.withLock {
            $0 = Window(
                device: device.path,
                address: device.address,
                adapterPath: adapter?.path,
                adapterAddress: adapter?.address,
                client: client
            )
        }
        do {
            try await becomeDefault(client)
            try await device.pair(timeout: timeout)
        } catch {
            await closeWindow(client)
            throw error
        }
        await closeWindow(client)
    }

    private func becomeDefault(_ client: BlueZClient) async throws(BlueZError) {
        client.connection.export(object)
        do {
            try await requestDefault(client)
        } catch  where error.kind == .doesNotExist {
            // bluetoothd restarted and forgot us, and the owner has not registered us again yet.
            try await registerAgent(client)
            try await requestDefault(client)
        }
    }

    /// Closes the window and gives the default back. BlueZ has no call to stop being the default agent:
    /// unregistering takes the agent off bluetoothd's queue of default agents (the one before it is the default
    /// again), and registering again keeps our own connection's pairing routed to it.
    private func closeWindow(_ client: BlueZClient) async {
        rules.window.withLock { $0 = nil }
        _ = try? await client.connection.callBlueZ(
            BlueZ.rootPath,
            BlueZ.Interface.agentManager,
            "UnregisterAgent",
            [.objectPath(path)]
        )
        try? await registerAgent(client)
    }

    private func registerAgent(_ client: BlueZClient) async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(
            BlueZ.rootPath,
            BlueZ.Interface.agentManager,
            "RegisterAgent",
            [.objectPath(path), .string(Self.capability)]
        )
    }

    private func requestDefault(_ client: BlueZClient) async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(
            BlueZ.rootPath,
            BlueZ.Interface.agentManager,
            "RequestDefaultAgent",
            [.objectPath(path)]
        )
    }

    /// Why a request about the device at `devicePath` (for `service`, if it names one) is refused; nil: accepted.
    func refusal(_ request: String, device devicePath: String, service: BluetoothUUID? = nil) -> String? {
        rules.refusal(request, device: devicePath, service: service)
    }

    private static func makeInterface(_ rules: Rules) -> DBusInterface {
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
                DBusMethod("RequestConfirmation", inputs: [("device", .objectPath), ("passkey", .uint32)]) {
                    call throws(DBusError) in
                    try rules.decide("RequestConfirmation", call)
                    return []
                },
                DBusMethod("RequestAuthorization", inputs: [("device", .objectPath)]) { call throws(DBusError) in
                    try rules.decide("RequestAuthorization", call)
                    return []
                },
                DBusMethod("AuthorizeService", inputs: [("device", .objectPath), ("uuid", .string)]) {
                    call throws(DBusError) in
                    let text = call.arguments.count > 1 ? call.arguments[1].string ?? "" : ""
                    // A service it cannot read is judged by the device alone; HID is recognised in either form.
                    try rules.decide("AuthorizeService", call, service: BluetoothUUID(text))
                    return []
                },
                accept("Cancel", []),
            ]
        )
    }
}

/// What the agent accepts: the window of the pairing under way, if any, and the rules around it. Kept apart from
/// the agent so its exported methods do not hold the agent itself.
private final class Rules: Sendable {
    let window = Mutex<Window?>(nil)
    let onRefusal: (@Sendable (String) -> Void)?

    init(onRefusal: (@Sendable (String) -> Void)?) {
        self.onRefusal = onRefusal
    }

    /// Why a request about the device at `devicePath` (for `service`, if it names one) is refused; nil: accepted.
    func refusal(_ request: String, device devicePath: String, service: BluetoothUUID? = nil) -> String? {
        if let service, PairingAgent.inputServices.contains(service) {
            return "systole's agent never authorises input devices (\(request) for \(service) from \(devicePath)): "
                + "a keyboard or mouse let in silently could type for someone else"
        }
        guard let window = window.withLock({ $0 }) else {
            return "systole's agent accepts only the sensor systoled is pairing, and it is pairing none "
                + "(\(request) from \(devicePath)); pair other devices with your desktop's Bluetooth settings "
                + "or bluetoothctl"
        }
        if devicePath == window.device || isMirror(devicePath, of: window) { return nil }
        return "systole's agent is pairing \(window.address.map { "\($0)" } ?? window.device) and accepts "
            + "requests for it only (\(request) from \(devicePath))"
    }

    /// Whether `devicePath` is the pairing adapter seen from another adapter of the same bluetoothd.
    private func isMirror(_ devicePath: String, of window: Window) -> Bool {
        let device = BluetoothDevice(client: window.client, path: devicePath)
        guard let own = window.adapterAddress, device.address == own else { return false }
        return device.adapterPath != window.adapterPath
    }

    func decide(_ request: String, _ call: DBusMethodCall, service: BluetoothUUID? = nil) throws(DBusError) {
        let device = call.arguments.first?.string ?? ""
        guard let reason = refusal(request, device: device, service: service) else { return }
        onRefusal?(reason)
        throw DBusError(name: "org.bluez.Error.Rejected", message: reason)
    }
}

/// The pairing under way.
private struct Window: Sendable {
    var device: String
    var address: BluetoothAddress?
    var adapterPath: String?
    var adapterAddress: BluetoothAddress?
    var client: BlueZClient
}

/// One pairing window at a time, in the order asked.
private actor Turns {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            busy = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
