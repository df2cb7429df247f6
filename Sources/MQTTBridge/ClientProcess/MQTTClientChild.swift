import Foundation
import Synchronization

/// systoled's MQTT client process: libmosquitto in a process of its own, with a cap on its memory.
///
/// libmosquitto (2.0) takes whatever length a broker announces for a message and allocates it, so a hostile or
/// impersonated broker could grow systoled by hundreds of MiB with one message. Here that allocation fails against
/// ``dataLimit``, libmosquitto gives up the connection, this process exits, and systoled starts another after a
/// backoff; recording never notices. systoled starts it as `/proc/self/exe --mqtt-client-process` (its `main` calls
/// ``runIfAsked()`` first) and talks to it over stdin and stdout in ``ClientFrames``.
public enum MQTTClientChild {
    /// The argument that makes systoled's executable this process.
    public static let argument = "--mqtt-client-process"

    /// The most private memory this process may map (heap, thread stacks): a few MiB are libmosquitto, OpenSSL and
    /// the Swift runtime; a broker's message larger than what is left fails to allocate.
    static let dataLimit = 40 << 20

    /// Becomes the MQTT client process and never returns when the executable was started with ``argument``.
    public static func runIfAsked() {
        guard CommandLine.arguments.dropFirst().first == argument else { return }
        run()
    }

    /// The process's exit statuses; each failure is told to systoled as an event before.
    enum Status: Int32 {
        case stopped = 0
        case noStart = 64
        case loopEnded = 70
    }

    private static func run() -> Never {
        closeInheritedDescriptors()
        var limit = rlimit(rlim_cur: rlim_t(dataLimit), rlim_max: rlim_t(dataLimit))
        if setrlimit(__rlimit_resource_t(RLIMIT_DATA.rawValue), &limit) != 0 {
            // Still publishing beats not publishing; the journal says what is missing (a unit that filters prlimit64).
            let reason = String(cString: strerror(errno))
            let message = "systoled: the MQTT client process cannot cap its memory: \(reason)\n"
            _ = message.withCString { write(2, $0, strlen($0)) }
        }
        // systemd's SIGTERM goes to the whole unit: this process waits for systoled's goodbye (or its end).
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        var commands = FrameReader(descriptor: 0)
        guard case .frame(let kind, let body) = commands.next(),
            case .start(let settings)? = try? ClientFrames.command(kind: kind, body: body)
        else { exit(Status.noStart.rawValue) }
        let events = EventWriter()
        let flags = Flags()
        let client: MosquittoClient
        var held: [String] = []
        do {
            client = try MosquittoClient(clientID: settings.clientID) { change in
                flags.connected.withLock { $0 = change.connected }
                // What goes wrong inside the first connect (OpenSSL's words for a certificate it cannot check) is
                // told with its failed start: systoled takes no connection events before the start's answer.
                let held = flags.heldReasons.withLock { held -> Bool in
                    guard held != nil else { return false }
                    held?.append(change.reason)
                    return true
                }
                if !held { events.send(.connection(change.connected, change.reason)) }
            }
            if let username = settings.username {
                try client.setCredentials(username: username, password: settings.password)
            }
            if settings.usesTLS { try client.useTLS(caFile: settings.caFile) }
            try client.setWill(
                MQTTMessage(topic: settings.willTopic, payload: settings.willPayload, qos: 1, retain: true)
            )
            let failure = try client.connect(host: settings.host, port: settings.port)
            held = flags.heldReasons.withLock { held in
                defer { held = nil }
                return held ?? []
            }
            if let failure {
                events.send(.started(false, ([failure] + held).joined(separator: ": ")))
                exit(Status.noStart.rawValue)
            }
        } catch {
            events.send(.refused(error.description))
            exit(Status.noStart.rawValue)
        }
        events.send(.started(true, ""))
        for reason in held { events.send(.connection(false, reason)) }
        let reader = Thread { [commands] in
            var commands = commands
            serve(&commands, client: client, events: events, flags: flags)
        }
        reader.start()
        let code = client.runLoop()
        if flags.stopping.withLock({ $0 }) { exit(Status.stopped.rawValue) }
        events.send(.connection(false, "the MQTT client gave up: \(MosquittoClient.describe(code))"))
        exit(Status.loopEnded.rawValue)
    }

    /// systoled's commands after the start. Its end (systoled gone) ends this process.
    private static func serve(
        _ commands: inout FrameReader,
        client: MosquittoClient,
        events: EventWriter,
        flags: Flags
    ) {
        while case .frame(let kind, let body) = commands.next() {
            switch try? ClientFrames.command(kind: kind, body: body) {
            case .publish(let message):
                if !client.publish(message) { events.send(.returned(message)) }
            case .stop:
                flags.stopping.withLock { $0 = true }
                // Without a connection the loop may be waiting out a reconnect delay: there is nobody to tell.
                guard flags.connected.withLock({ $0 }) else { exit(Status.stopped.rawValue) }
                client.disconnect()
                // The loop returns once the goodbye went out; a broker that does not take it is not waited for.
                sleep(5)
                exit(Status.stopped.rawValue)
            case .start, nil:
                exit(Status.noStart.rawValue)
            }
        }
        exit(Status.stopped.rawValue)
    }

    /// Only stdin, stdout and stderr stay: systoled's store, bus and sockets are not this process's business.
    private static func closeInheritedDescriptors() {
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for name in open {
            if let descriptor = Int32(name), descriptor > 2 { close(descriptor) }
        }
    }
}

/// What the child's threads share: whether the broker accepted us, and whether systoled asked it to stop.
final class Flags: Sendable {
    let connected = Mutex(false)
    let stopping = Mutex(false)
    /// Connection problems reported during the first connect, until it returns (then nil).
    let heldReasons = Mutex<[String]?>([])
}

/// Writes the child's events to stdout, one whole frame at a time from any thread.
final class EventWriter: Sendable {
    private let lock = Mutex(())

    func send(_ event: ClientFrames.Event) {
        let frame = ClientFrames.encode(event)
        lock.withLock { _ in
            var offset = 0
            while offset < frame.count {
                let written = frame[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
                if written < 0, errno == EINTR { continue }
                // systoled is gone: nothing more to say.
                guard written > 0 else { exit(MQTTClientChild.Status.stopped.rawValue) }
                offset += written
            }
        }
    }
}
