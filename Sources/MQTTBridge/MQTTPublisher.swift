import LiveFeed
import Logging
import ServiceLifecycle
import Synchronization

/// Publishes systoled's live values to an MQTT broker (`[mqtt]`), with Home Assistant discovery and availability
/// through a last will. It never slows the recording pipeline: the pipeline only tells the ``LiveFeed``; this service
/// builds the messages on its own task at most once a second and puts them in a bounded queue that drops the
/// oldest (``OutboundQueue``), which it empties while the broker is connected. libmosquitto connects and reconnects
/// with backoff in a process of its own with capped memory (``MQTTClientChild``), so a hostile broker cannot grow
/// systoled; when that process ends, another starts.
public final class MQTTPublisher: Service, Sendable {
    /// The moment's status, with the privacy setting applied.
    public typealias StatusSource = @Sendable () -> LiveStatus

    private let settings: MQTTSettings
    private let feed: LiveFeed
    private let status: StatusSource
    private let messages: LiveMessages
    private let onDropped: @Sendable (Int) -> Void
    private let onConnection: @Sendable (Bool) -> Void
    private let logger: Logger
    private let state: Mutex<State>

    private struct State {
        var queue: OutboundQueue
        var connected = false
        /// Sensors whose discovery configs went out on this connection.
        var announced: Set<String> = []
        /// The reasons logged for not being connected since the last connection: each is logged once, so a broker
        /// that stays away (or a certificate that cannot be checked) is not logged at every retry.
        var reportedProblems: Set<String> = []
        /// Each live topic's last payload and when it went out: an unchanged value is sent again only after
        /// ``repeatInterval`` (a battery level, a paused workout), so a subscriber that came later still gets it.
        var lastSent: [String: (payload: [UInt8], at: ContinuousClock.Instant)] = [:]
        /// The MQTT client process, once one started connecting.
        var client: MQTTClientProcess?
        var startedAt: ContinuousClock.Instant?
        /// The wait before the next process when this one ends within a minute.
        var restartDelay = Duration.seconds(1)
    }

    /// How long an unchanged live value waits before it is published again.
    public static let repeatInterval: Duration = .seconds(30)

    private enum Wake: Sendable {
        case changed
        case connection(MosquittoClient.ConnectionChange)
        /// A message the client process could not take: first in the queue again.
        case returned(MQTTMessage)
        /// The client process ended; another is started.
        case ended(String)
    }

    /// The most messages a second's live values make: a sensor's state each, and the workout's.
    public static let interval: Duration = .seconds(1)

    public init(
        settings: MQTTSettings,
        feed: LiveFeed,
        status: @escaping StatusSource,
        onDropped: @escaping @Sendable (Int) -> Void = { _ in },
        onConnection: @escaping @Sendable (Bool) -> Void = { _ in },
        logger: Logger
    ) {
        self.settings = settings
        self.feed = feed
        self.status = status
        self.onDropped = onDropped
        self.onConnection = onConnection
        self.logger = logger
        messages = LiveMessages(settings: settings)
        state = Mutex(State(queue: OutboundQueue(limit: settings.queueLimit)))
    }

    public func run() async throws {
        // Bounded: a flood of events cannot grow systoled. A process's end is its last event, and nothing but the
        // feed's changes (one a second) comes after it until it is handled, so it is never the one dropped.
        let (wakes, wake) = AsyncStream.makeStream(of: Wake.self, bufferingPolicy: .bufferingNewest(256))
        let feed = self.feed
        await withTaskGroup(of: Void.self) { group in
            // The feed's changes, at most one a second.
            group.addTask {
                var version = feed.version
                while let next = await feed.next(after: version) {
                    version = next
                    wake.yield(.changed)
                    try? await Task.sleep(for: Self.interval)
                }
            }
            group.addTask {
                guard await self.startClient(wake: wake) else { return }
                for await event in wakes {
                    if case .ended(let reason) = event {
                        self.handle(.connection(.init(connected: false, reason: reason)))
                        guard await self.startClient(wake: wake) else { return }
                    } else {
                        self.handle(event)
                    }
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
            wake.finish()
        }
        // Goodbye: availability offline (a lost connection has the will say it), then disconnect.
        let (connected, client) = state.withLock { ($0.connected, $0.client) }
        if connected {
            _ = client?.publish(MQTTMessage(topic: settings.availabilityTopic, text: "offline", qos: 1, retain: true))
        }
        await client?.stop()
    }

    /// Starts an MQTT client process and its first connection attempt, again after 1 s, doubling to a minute, until
    /// one gets under way (the broker may start after systoled) or systoled stops. A process that ran for a minute
    /// or more starts its successor at once. False when MQTT is off: libmosquitto refused a setting, which no retry
    /// mends (recording goes on without MQTT).
    private func startClient(wake: AsyncStream<Wake>.Continuation) async -> Bool {
        let settings = ClientSettings(
            host: settings.host,
            port: settings.port,
            clientID: settings.clientID,
            username: settings.username,
            password: settings.password,
            usesTLS: settings.usesTLS,
            caFile: settings.caFile,
            willTopic: settings.availabilityTopic,
            willPayload: Array("offline".utf8)
        )
        let previous = state.withLock { state in
            defer {
                state.client = nil
                state.connected = false
            }
            return state.startedAt
        }
        var delay = Duration.zero
        if let previous, ContinuousClock.now - previous < .seconds(60) {
            delay = state.withLock { $0.restartDelay }
        }
        while !Task.isCancelled {
            if delay > .zero {
                do { try await Task.sleep(for: delay) } catch { return false }
            }
            let client = MQTTClientProcess { event in
                switch event {
                case .connection(let connected, let reason):
                    wake.yield(.connection(.init(connected: connected, reason: reason)))
                case .returned(let message): wake.yield(.returned(message))
                case .ended(let reason): wake.yield(.ended(reason))
                }
            }
            let outcome = await client.start(settings)
            delay = min(max(delay * 2, .seconds(1)), .seconds(60))
            switch outcome {
            case .started:
                state.withLock {
                    $0.client = client
                    $0.startedAt = .now
                    $0.restartDelay = delay
                }
                return true
            case .failed(let reason):
                handle(.connection(.init(connected: false, reason: reason)))
            case .refused(let reason):
                logger.error("MQTT is off: \(reason). Check the [mqtt] table of systoled.toml; recording goes on")
                return false
            }
        }
        return false
    }

    private func handle(_ wake: Wake) {
        let client = state.withLock { $0.client }
        switch wake {
        case .changed:
            let status = status()
            state.withLock { state in
                for sensor in status.sensors {
                    guard let address = sensor.address, state.connected,
                        !state.announced.contains(address)
                    else { continue }
                    state.announced.insert(address)
                    for message in messages.discovery(of: sensor, showsHeartRate: status.showsHeartRate) {
                        Self.send(message, state: &state, client: client)
                    }
                }
                let now = ContinuousClock.now
                for message in messages.states(status) {
                    if let last = state.lastSent[message.topic], last.payload == message.payload,
                        now - last.at < Self.repeatInterval
                    {
                        continue
                    }
                    state.lastSent[message.topic] = (message.payload, now)
                    Self.send(message, state: &state, client: client)
                }
            }
        case .returned(let message):
            state.withLock { $0.queue.prepend(message) }
        case .ended(let reason):
            handle(.connection(.init(connected: false, reason: reason)))
            return
        case .connection(let change):
            onConnection(change.connected)
            let showsHeartRate = status().showsHeartRate
            let log = state.withLock { state -> String? in
                state.connected = change.connected
                if change.connected {
                    // A broker that restarted may have lost every retained message: announce again, before what
                    // waited in the queue.
                    state.announced = []
                    state.lastSent = [:]
                    state.reportedProblems = []
                    let announcements =
                        messages.workoutDiscovery(showsHeartRate: showsHeartRate) + [
                            MQTTMessage(topic: settings.availabilityTopic, text: "online", qos: 1, retain: true)
                        ]
                    for message in announcements where !(client?.publish(message) ?? false) {
                        state.queue.prepend(message)
                    }
                    return "MQTT connected to \(settings.host):\(settings.port)"
                }
                guard state.reportedProblems.count < 8, state.reportedProblems.insert(change.reason).inserted else {
                    return nil
                }
                return
                    "MQTT: not connected to \(settings.host):\(settings.port): \(change.reason); retrying with backoff up to a minute (the live values wait in a queue of \(settings.queueLimit), the oldest dropped)"
            }
            if let log { logger.info("\(log)") }
            if change.connected {
                // What waited goes out first; the sensors are announced with the status that follows.
                flush(client)
                handle(.changed)
            }
        }
        flush(client)
    }

    /// Publishes `message` at once when connected and nothing waits before it; queues it otherwise.
    private static func send(_ message: MQTTMessage, state: inout State, client: MQTTClientProcess?) {
        if state.connected, state.queue.isEmpty, client?.publish(message) ?? false { return }
        state.queue.append(message)
    }

    /// Hands the queue to libmosquitto while connected; a message it refuses goes back in front.
    private func flush(_ client: MQTTClientProcess?) {
        let dropped = state.withLock { state -> Int in
            while state.connected, let message = state.queue.removeFirst() {
                if !(client?.publish(message) ?? false) {
                    state.queue.prepend(message)
                    break
                }
            }
            return state.queue.takeDropped()
        }
        if dropped > 0 { onDropped(dropped) }
    }
}
