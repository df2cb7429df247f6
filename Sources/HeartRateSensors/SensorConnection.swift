import BlueZ

/// The life of one sensor's connection as decisions without I/O, in postgres-nio's style: a ``State``, an
/// ``Action``, and a mutating method for each thing that happens, returning what to do next. ``HeartRateSensor``
/// does what each action names (find, connect, resolve, subscribe, pair, stream, wait) and tells the machine how it
/// went; the tests drive the machine alone, with no bus.
///
/// It decides the order of the steps, which way to subscribe (AcquireNotify or StartNotify, and the fallback from
/// one to the other, remembered per device), when to pair, and how long to wait before the next attempt (capped
/// exponential backoff, starting over after a connection that streamed or with a new bluetoothd).
struct SensorConnection {
    /// Where the connection stands.
    enum State: Equatable {
        case idle
        case finding
        case connecting(BluetoothAddress)
        case resolvingServices(BluetoothAddress)
        /// Asking for notifications the way `method` says; `mayPair`: a refusal for want of pairing may still pair.
        case subscribing(BluetoothAddress, method: NotifyMethod, mayPair: Bool)
        case pairing(BluetoothAddress, method: NotifyMethod)
        case streaming(BluetoothAddress, method: NotifyMethod)
        case waiting(attempt: Int)
        case stopped
    }

    /// What the sensor does next.
    enum Action: Equatable {
        /// Look for the device (bluetoothd's cache, else discovery).
        case find
        /// Connect the device found.
        case connect(BluetoothAddress)
        /// Wait for bluetoothd to resolve the device's services and find 0x2A37.
        case resolveServices
        /// Subscribe to 0x2A37 by `method`; `fallbackReason` says why it is StartNotify when AcquireNotify was asked.
        case subscribe(NotifyMethod, fallbackReason: String?)
        /// Pair, then the machine is told ``SensorConnection/paired()``.
        case pair
        /// Handle notifications until the link drops; `firstOfConnection`: the connection just began streaming (its
        /// static values are read and it counts as a connection), rather than the same one changing path.
        case stream(firstOfConnection: Bool)
        /// StartNotify on the same connection after the acquired socket failed (bluetoothd may take a moment to
        /// release it).
        case subscribeAfterRelease(fallbackReason: String?)
        /// Report the disconnect, then wait `delay` (or until bluetoothd reconnects the sensor) and tell the machine
        /// ``SensorConnection/waited()``; `endsSubscription`: the connection had subscribed, so what its
        /// notifications left behind is cleared.
        case reconnect(reason: String, attempt: Int, delay: Duration, endsSubscription: Bool)
        /// Stop: the sensor was cancelled.
        case stop
    }

    /// Why bluetoothd refused a subscription, as far as the machine's decisions go.
    struct Refusal: Equatable {
        enum Cause: Equatable {
            /// The sensor wants a paired host (not permitted, not authorized, authentication failed).
            case needsPairing
            /// Another client acquired the notifications.
            case heldByAnother
            /// AcquireNotify got no answer in time.
            case noAnswer
            /// bluetoothd does not offer AcquireNotify.
            case notOffered
            case other
        }

        var cause: Cause
        /// The error as bluetoothd gave it.
        var description: String
        var deviceIsConnected: Bool
        var deviceIsPaired: Bool
    }

    private(set) var state = State.idle
    /// Failed attempts since the last connection that streamed (or since bluetoothd started).
    private(set) var attempt = 0
    /// Devices that fell back from AcquireNotify to StartNotify, with why: their next connections do not try it.
    private(set) var acquireFallbacks: [BluetoothAddress: String] = [:]
    private var generation: Int
    private var subscribedThisConnection = false
    private let initialDelay: Duration
    private let maximumDelay: Duration
    private let pairsWhenRequired: Bool

    /// A machine for a sensor whose first attempt is made with bluetoothd `generation` (``BlueZClient/serviceGeneration``).
    init(
        initialReconnectDelay: Duration,
        maximumReconnectDelay: Duration,
        pairsWhenRequired: Bool,
        generation: Int
    ) {
        initialDelay = initialReconnectDelay
        maximumDelay = maximumReconnectDelay
        self.pairsWhenRequired = pairsWhenRequired
        self.generation = generation
    }

    /// What a client is told when bluetoothd refuses it because another client acquired the notifications.
    static let heldByAnother =
        "another program holds this sensor's notifications through AcquireNotify (systoled with notify = "
        + "\"acquire\", or 'systole monitor --notify acquire'), and bluetoothd lets no one else subscribe "
        + "meanwhile: stop that program, or set this sensor to \"signal\" under [bluetooth] in systoled's "
        + "configuration"

    // MARK: Events

    mutating func start() -> Action {
        guard state == .idle else { return .stop }
        state = .finding
        return .find
    }

    /// The device was found; `isConnected`: bluetoothd has it connected already.
    mutating func found(_ address: BluetoothAddress, isConnected: Bool) -> Action {
        subscribedThisConnection = false
        if isConnected {
            state = .resolvingServices(address)
            return .resolveServices
        }
        state = .connecting(address)
        return .connect(address)
    }

    mutating func connected() -> Action {
        guard case .connecting(let address) = state else { return unexpected("connected") }
        state = .resolvingServices(address)
        return .resolveServices
    }

    /// Services resolved with 0x2A37 there; `wanted` is how the options say this device's notifications travel.
    mutating func servicesResolved(wanted: NotifyMethod) -> Action {
        guard case .resolvingServices(let address) = state else { return unexpected("servicesResolved") }
        let fallback = acquireFallbacks[address]
        let method = wanted == .acquire && fallback == nil ? NotifyMethod.acquire : .signal
        state = .subscribing(address, method: method, mayPair: true)
        return .subscribe(method, fallbackReason: fallback)
    }

    mutating func subscribed() -> Action {
        guard case .subscribing(let address, let method, _) = state else { return unexpected("subscribed") }
        let first = !subscribedThisConnection
        subscribedThisConnection = true
        state = .streaming(address, method: method)
        return .stream(firstOfConnection: first)
    }

    /// bluetoothd refused the subscription: pair and ask again, fall back to StartNotify, or give the attempt up.
    mutating func subscribeRefused(_ refusal: Refusal, generation current: Int) -> Action {
        guard case .subscribing(let address, let method, let mayPair) = state else {
            return unexpected("subscribeRefused")
        }
        if refusal.cause == .heldByAnother, method == .signal {
            return failed(Self.heldByAnother, generation: current)
        }
        if mayPair, pairsWhenRequired, refusal.cause == .needsPairing, !refusal.deviceIsPaired {
            state = .pairing(address, method: method)
            return .pair
        }
        guard method == .acquire, refusal.deviceIsConnected else {
            return failed(refusal.description, generation: current)
        }
        let reason =
            switch refusal.cause {
            case _ where !mayPair: "AcquireNotify was refused after pairing: \(refusal.description)"
            case .noAnswer: "AcquireNotify got no answer within the time allowed"
            case .notOffered: "bluetoothd does not offer AcquireNotify"
            default: "AcquireNotify was refused: \(refusal.description)"
            }
        acquireFallbacks[address] = reason
        state = .subscribing(address, method: .signal, mayPair: false)
        return .subscribe(.signal, fallbackReason: reason)
    }

    /// Pairing succeeded: ask again the same way, without pairing a second time.
    mutating func paired() -> Action {
        guard case .pairing(let address, let method) = state else { return unexpected("paired") }
        state = .subscribing(address, method: method, mayPair: false)
        return .subscribe(method, fallbackReason: acquireFallbacks[address])
    }

    /// The acquired socket failed while the device stayed connected: StartNotify on the same connection, and for
    /// this device from now on.
    mutating func acquiredPathFailed(_ reason: String) -> Action {
        guard case .streaming(let address, _) = state else { return unexpected("acquiredPathFailed") }
        acquireFallbacks[address] = reason
        state = .subscribing(address, method: .signal, mayPair: false)
        return .subscribeAfterRelease(fallbackReason: reason)
    }

    /// The link dropped after streaming: the next attempt starts from the first delay.
    mutating func streamEnded(generation current: Int) -> Action {
        guard case .streaming = state else { return unexpected("streamEnded") }
        attempt = 0
        return waitToReconnect("the sensor disconnected", generation: current)
    }

    /// A step failed (the device vanished, the connection or the services timed out, a refusal, …).
    mutating func failed(_ reason: String, generation current: Int) -> Action {
        guard state != .stopped else { return .stop }
        return waitToReconnect(reason, generation: current)
    }

    /// The wait before reconnecting is over (or bluetoothd connected the sensor meanwhile).
    mutating func waited() -> Action {
        guard case .waiting = state else { return unexpected("waited") }
        state = .finding
        return .find
    }

    /// The sensor's task was cancelled: nothing more is done.
    mutating func cancelled() -> Action {
        state = .stopped
        return .stop
    }

    // MARK: Decisions

    private mutating func waitToReconnect(_ reason: String, generation current: Int) -> Action {
        // A new bluetoothd is a fresh start: back off from the first delay again, not from where the attempts with
        // the old one left it.
        if current != generation {
            generation = current
            attempt = 0
        }
        attempt += 1
        let delay = min(maximumDelay, initialDelay * (1 << min(attempt - 1, 16)))
        let endsSubscription = subscribedThisConnection
        subscribedThisConnection = false
        state = .waiting(attempt: attempt)
        return .reconnect(reason: reason, attempt: attempt, delay: delay, endsSubscription: endsSubscription)
    }

    /// An event the state does not expect is a bug in the driver: stop rather than act on a wrong assumption.
    private mutating func unexpected(_ event: String) -> Action {
        assertionFailure("SensorConnection: \(event) in \(state)")
        state = .stopped
        return .stop
    }
}
