import CMosquitto
import Foundation
import SafeText

/// A thin binding over one libmosquitto client, used in systoled's MQTT client process (``MQTTClientChild``).
/// ``runLoop()`` does the network on the thread that calls it: it connects, keeps the connection alive and
/// reconnects with capped exponential backoff; the connection's changes reach ``onConnectionChange`` on that thread.
/// Publishing is safe from any thread.
final class MosquittoClient: @unchecked Sendable {
    /// The connection's changes: true once the broker accepted us, false when the connection is lost or refused
    /// (with libmosquitto's reason).
    struct ConnectionChange: Sendable {
        var connected: Bool
        var reason: String
    }

    private let handle: OpaquePointer
    private let onConnectionChange: @Sendable (ConnectionChange) -> Void

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private static let initialized: Bool = {
        mosquitto_lib_init()
        return true
    }()

    init(clientID: String, onConnectionChange: @escaping @Sendable (ConnectionChange) -> Void) throws(Failure) {
        _ = Self.initialized
        self.onConnectionChange = onConnectionChange
        guard let handle = mosquitto_new(clientID, true, nil) else {
            throw Failure(description: "libmosquitto could not make a client (out of memory?)")
        }
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(handle) { _, context, code in
            guard let context else { return }
            let client = Unmanaged<MosquittoClient>.fromOpaque(context).takeUnretainedValue()
            let reason = String(cString: mosquitto_connack_string(code))
            client.onConnectionChange(ConnectionChange(connected: code == 0, reason: reason))
        }
        // A TLS handshake that fails (a certificate that cannot be checked) ends no connection libmosquitto reports
        // to the callbacks above; it only logs it. Its errors are taken as the reason for not being connected.
        mosquitto_log_callback_set(handle) { _, context, level, message in
            guard let context, let message, level & Int32(MOSQ_LOG_ERR) != 0 else { return }
            let client = Unmanaged<MosquittoClient>.fromOpaque(context).takeUnretainedValue()
            client.onConnectionChange(ConnectionChange(connected: false, reason: String(cString: message)))
        }
        mosquitto_disconnect_callback_set(handle) { _, context, code in
            guard let context else { return }
            let client = Unmanaged<MosquittoClient>.fromOpaque(context).takeUnretainedValue()
            let reason = code == 0 ? "disconnected" : MosquittoClient.describe(code)
            client.onConnectionChange(ConnectionChange(connected: false, reason: reason))
        }
    }

    deinit {
        mosquitto_destroy(handle)
    }

    /// libmosquitto's words for one of its codes (the system's for an errno).
    static func describe(_ code: Int32) -> String {
        switch code {
        case MOSQ_ERR_ERRNO.rawValue: return String(cString: strerror(errno))
        case MOSQ_ERR_NOMEM.rawValue:
            // In the client process's capped memory only a message from the broker is that large.
            return "the broker sent a message larger than systoled takes (it subscribes to nothing, so an honest "
                + "broker sends none): check that the address is your broker, and use mqtts:// with its CA"
        default: return String(cString: mosquitto_strerror(code))
        }
    }

    private func check(_ code: Int32, _ doing: String) throws(Failure) {
        guard code != 0 else { return }
        throw Failure(description: "\(doing): \(String(cString: mosquitto_strerror(code)))")
    }

    func setCredentials(username: String, password: String?) throws(Failure) {
        try check(mosquitto_username_pw_set(handle, username, password), "setting the MQTT username")
    }

    /// TLS with the given CA file, or the system's certificates when nil.
    func useTLS(caFile: String?) throws(Failure) {
        if let caFile {
            let named = "reading the MQTT CA file \(caFile.quotedExcerpt(maximum: 256))"
            try check(mosquitto_tls_set(handle, caFile, nil, nil, nil, nil), named)
        } else {
            try check(mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "using the system's CA certificates")
        }
    }

    /// The message the broker publishes for us when the connection is lost without a goodbye.
    func setWill(_ message: MQTTMessage) throws(Failure) {
        try check(
            mosquitto_will_set(
                handle,
                message.topic,
                Int32(message.payload.count),
                message.payload,
                message.qos,
                message.retain
            ),
            "setting the MQTT last will"
        )
    }

    /// Starts connecting; nil once a first attempt got under way, else why it failed at once (the broker refused
    /// the connection, or its name did not resolve). Then ``runLoop()`` keeps the connection.
    func connect(host: String, port: Int, keepAlive: Int32 = 30) throws(Failure) -> String? {
        try check(mosquitto_reconnect_delay_set(handle, 1, 60, true), "setting the MQTT reconnect delay")
        let code = mosquitto_connect_async(handle, host, Int32(port), keepAlive)
        return code == 0 ? nil : Self.describe(code)
    }

    /// Keeps the connection on the calling thread, reconnecting (1 s, doubling to 60 s), until ``disconnect()`` or
    /// an error libmosquitto cannot go on after (out of memory, a protocol error): then its code.
    func runLoop() -> Int32 {
        mosquitto_loop_forever(handle, -1, 1)
    }

    /// Says goodbye: what was published before goes out first, then ``runLoop()`` returns.
    func disconnect() {
        mosquitto_disconnect(handle)
    }

    /// Hands `message` to libmosquitto; false when not connected (it is not queued by libmosquitto then).
    func publish(_ message: MQTTMessage) -> Bool {
        mosquitto_publish(
            handle,
            nil,
            message.topic,
            Int32(message.payload.count),
            message.payload,
            message.qos,
            message.retain
        ) == 0
    }
}
