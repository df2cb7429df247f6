import Foundation
import HeartRateProfile

/// What the simulator plays: adapters, sensors with their heart-rate profiles, and faults, all deterministic for
/// a seed. Written as JSON (see docs/simulator.md); every field has a default, and unknown keys are refused.
public struct Scenario: Codable, Sendable, Equatable {
    /// Seeds every random choice (addresses, RR variability, drops).
    public var seed: UInt64 = 1
    public var adapters: [AdapterSpec] = [AdapterSpec()]
    public var sensors: [SensorSpec] = [SensorSpec()]
    /// bluetoothd restarts: the name `org.bluez` is dropped at `at` seconds and taken again `for` seconds later,
    /// with every object gone and rebuilt (only paired devices come back on their own).
    public var restarts: [Window] = []
    /// How long a Connect() to a sensor out of range takes to fail, in seconds.
    public var connectTimeout: Double = 2
    /// Seconds after which an unpaired device that is neither connected nor seen by discovery is removed
    /// (BlueZ's `TemporaryTimeout`).
    public var temporaryTimeout: Double = 30
    /// Announce a newly discovered GATT database (InterfacesAdded) before ServicesResolved instead of just after
    /// it. bluetoothd 5.66 has been seen doing both; after is what the latest trace shows, and is the default.
    public var gattObjectsBeforeResolved = false
    /// Leave out `Connected: true` when a connection comes up, as bluetoothd 5.66 sometimes does (clients must
    /// rely on ServicesResolved). Off by default: bluetoothd signals it most of the time.
    public var quietConnected = false
    /// Play the sensors as the real-stack VM does: as a second adapter of the same bluetoothd. Then the peripheral
    /// side of a pairing, which did not call Pair(), asks the *default* agent to authorise the central (a device
    /// on the last adapter whose address is the pairing adapter's), and the pairing fails when it refuses or
    /// there is no default agent. Needs two adapters.
    public var mirrorPairing = false

    public init() {}

    /// A time window in seconds since the simulator started.
    public struct Window: Codable, Sendable, Equatable {
        public var at: Double
        public var `for`: Double
        /// For a restart: bluetoothd dies (its connection just closes) instead of stopping the way
        /// `systemctl restart bluetooth` stops it (links down, adapters off, Release, every object removed).
        public var crash = false
        public init(at: Double, for duration: Double, crash: Bool = false) {
            self.at = at
            self.for = duration
            self.crash = crash
        }
    }

    public struct AdapterSpec: Codable, Sendable, Equatable {
        /// Bluetooth address; derived from the adapter's index when nil.
        public var address: String?
        public var powered = true
        public var alias: String?
        /// Whether the sensors are in this adapter's range: when false its discovery finds nothing and no sensor is
        /// paired with it (a second adapter across the house, or a dongle whose antenna is elsewhere).
        public var seesSensors = true
        /// Whether discovery reports an RSSI: some controllers (the kernel's btvirt ones among them) report none,
        /// and bluetoothd then leaves the property out.
        public var reportsRSSI = true
        public init(address: String? = nil, powered: Bool = true, seesSensors: Bool = true, reportsRSSI: Bool = true) {
            self.address = address
            self.powered = powered
            self.seesSensors = seesSensors
            self.reportsRSSI = reportsRSSI
        }
    }

    /// One sensor, or `count` alike.
    public struct SensorSpec: Codable, Sendable, Equatable {
        public var model: SensorModel = .polarH10
        public var count = 1
        /// Advertised name; the model's pattern when nil (only with count 1).
        public var name: String?
        /// Address; derived from the seed when nil (only with count 1).
        public var address: String?
        public var profile = ProfileSpec()
        /// Notifications per second; the model's default when nil.
        public var rate: Double?
        /// Whether RR intervals are sent; the model's default when nil.
        public var rr: Bool?
        /// Whether energy expended is sent (every 10th notification); the model's default when nil.
        public var energy: Bool?
        /// Whether the contact status is sent; the model's default when nil.
        public var contact: Bool?
        /// Energy expended at start, kJ (set near 65535 to see saturation quickly).
        public var energyStart: UInt16 = 0
        /// The GAP Device Name (0x2A00) when it differs from the advertised name: bluetoothd reads it when it
        /// resolves services and shows it as Name (and Alias, unless one was set) from then on. BlueZ's example
        /// peripheral advertises "BZ-HRM" and is called "BlueZ 5.66".
        public var gapName: String?
        /// The ATT MTU of the link, which bounds a notification to `mtu - 3` bytes; shown as the characteristics'
        /// `MTU`. 23 (the LE minimum) when nil, or 517 (the most bluetoothd accepts) for a sensor with a storm.
        public var mtu: Int?
        /// Whether StartNotify is refused until the device is paired; the model's default when nil.
        public var requiresPairing: Bool?
        /// Known to bluetoothd (paired and bonded) from the start, as after an earlier pairing.
        public var paired = false
        public var faults: [FaultSpec] = []
        /// How AcquireNotify behaves for this sensor.
        public var acquire = AcquireSpec()
        /// Polar's Measurement Data service (ECG, accelerometer); none when nil. Only a Polar H10 offers it.
        public var pmd: PMDSpec?
        public init(model: SensorModel = .polarH10, count: Int = 1) {
            self.model = model
            self.count = count
        }

        /// The ATT MTU played: an H10 with PMD asks for 232, what its full ECG frames need.
        var effectiveMTU: Int { mtu ?? (faults.contains { $0.kind == .storm } ? 517 : pmd != nil ? 232 : 23) }
    }

    /// How heart rate evolves over time.
    public struct ProfileSpec: Codable, Sendable, Equatable {
        public enum Kind: String, Codable, Sendable { case steady, ramp, intervals }
        public var kind: Kind = .steady
        /// steady: the rate.
        public var bpm: Double = 72
        /// ramp: from → to over `duration` seconds, then stays.
        public var from: Double = 70
        public var to: Double = 170
        public var duration: Double = 600
        /// intervals: `work` seconds at `high`, `rest` seconds at `low`, repeated.
        public var low: Double = 110
        public var high: Double = 170
        public var work: Double = 60
        public var rest: Double = 60
        public init(kind: Kind = .steady) { self.kind = kind }
    }

    /// Something going wrong with one sensor.
    public struct FaultSpec: Codable, Sendable, Equatable {
        public enum Kind: String, Codable, Sendable {
            /// Out of range at `at` for `for` seconds: the link drops, Connect() fails until it is back.
            case disconnect
            /// Notifications lost in the air from `at` for `for` seconds (beats in them are lost too).
            case drop
            /// Every `every`-th notification from `at` on is malformed (a cut heart-rate field).
            case malformed
            /// Skin contact lost from `at` for `for` seconds: contact "not detected", no RR.
            case contactLoss = "contact-loss"
            /// From `at` for `for` seconds every notification reports `bpm` as its heart rate, in a well-formed
            /// payload (the 16-bit format when `bpm` exceeds 255).
            case impossibleHeartRate = "impossible-heart-rate"
            /// From `at` for `for` seconds every notification carries the energy field, which drops to 0 kJ at
            /// the start of each cycle of `every` notifications and says `value` kJ for the rest of the cycle.
            case energyJump = "energy-jump"
            /// From `at` for `for` seconds the sensor notifies `rate` times a second instead of its own rate,
            /// each notification carrying `rr` RR intervals of one beat each (far more beats than time passed).
            case storm
            /// From `at` for `for` seconds the link drops `rate` times a second; the sensor advertises again half
            /// a period after each drop (where bluetoothd's auto-connect, or a client's Connect(), takes it back).
            case flap
            /// Every `every`-th beat from `at` on (for `for` seconds, or to the end when `for` is 0) is premature:
            /// its interval is ``FaultSpec/ectopicPrematurity`` shorter and the next one longer by as much (the
            /// compensatory pause), as with a premature ventricular contraction.
            case ectopic
            /// Every `every`-th beat from `at` on (for `for` seconds, or to the end when `for` is 0) is not seen by
            /// the strap: its interval is not sent, and the next one sent is the two together.
            case missedBeat = "missed-beat"
        }
        public var kind: Kind
        public var at: Double = 0
        public var `for`: Double = 0
        /// malformed: every `every`-th notification; energy-jump: the cycle length (0: the default, 2); ectopic,
        /// missed-beat: every `every`-th beat.
        public var every: Int = 0
        /// impossible-heart-rate: the heart rate reported, bpm.
        public var bpm: UInt16 = 65535
        /// energy-jump: the energy expended reported after each cycle's first notification, kJ.
        public var value: UInt16 = 65534
        /// storm: notifications per second (default 1000); flap: link drops per second (default 20).
        public var rate: Double?
        /// storm: RR intervals in each notification.
        public var rr: Int = 255
        public init(_ kind: Kind, at: Double, for duration: Double = 0, every: Int = 0) {
            self.kind = kind
            self.at = at
            self.for = duration
            self.every = every
        }

        /// The hostile kinds, which do nothing without a window: a missing `for` is refused rather than played as
        /// nothing, since a test that plays nothing passes for the wrong reason.
        static let windowed: Set<Kind> = [.impossibleHeartRate, .energyJump, .storm, .flap]

        /// Whether the fault's window holds `time`.
        func covers(_ time: Double) -> Bool { time >= at && time < at + self.for }

        /// The kinds that change beats, each `every`-th beat of a window that is open-ended when `for` is 0.
        static let beatKinds: Set<Kind> = [.ectopic, .missedBeat]

        /// Whether a beat fault's window holds a beat at `time`.
        func holdsBeat(at time: Double) -> Bool { time >= at && (self.for <= 0 || time < at + self.for) }

        /// How much earlier than its time an ectopic beat comes, as a fraction of its interval.
        public static let ectopicPrematurity = 0.3

        /// The rate a storm or flap plays at.
        var effectiveRate: Double { rate ?? (kind == .flap ? 20 : 1000) }

        /// The cycle length an energy jump plays with.
        var effectiveEvery: Int { every == 0 ? 2 : every }
    }
}

// MARK: - Decoding with defaults, refusing unknown keys

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Reads a keyed object whose fields all have defaults, refusing keys it does not know.
struct DefaultingReader {
    let container: KeyedDecodingContainer<AnyKey>

    init(_ decoder: any Decoder, allowed: [String]) throws {
        container = try decoder.container(keyedBy: AnyKey.self)
        for key in container.allKeys where !allowed.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: container.codingPath + [key],
                    debugDescription: "unknown key '\(key.stringValue)' (known: \(allowed.joined(separator: ", ")))"
                )
            )
        }
    }

    func read<T: Decodable>(_ key: String, into value: inout T) throws {
        if let decoded = try container.decodeIfPresent(T.self, forKey: AnyKey(stringValue: key)) { value = decoded }
    }

    func read<T: Decodable>(_ key: String, into value: inout T?) throws {
        if let decoded = try container.decodeIfPresent(T.self, forKey: AnyKey(stringValue: key)) { value = decoded }
    }
}

extension Scenario {
    public init(from decoder: any Decoder) throws {
        let r = try DefaultingReader(
            decoder,
            allowed: [
                "seed", "adapters", "sensors", "restarts", "connectTimeout", "temporaryTimeout",
                "gattObjectsBeforeResolved", "quietConnected", "mirrorPairing",
            ]
        )
        try r.read("seed", into: &seed)
        try r.read("adapters", into: &adapters)
        try r.read("sensors", into: &sensors)
        try r.read("restarts", into: &restarts)
        try r.read("connectTimeout", into: &connectTimeout)
        try r.read("temporaryTimeout", into: &temporaryTimeout)
        try r.read("gattObjectsBeforeResolved", into: &gattObjectsBeforeResolved)
        try r.read("quietConnected", into: &quietConnected)
        try r.read("mirrorPairing", into: &mirrorPairing)
    }
}

extension Scenario.Window {
    public init(from decoder: any Decoder) throws {
        let r = try DefaultingReader(decoder, allowed: ["at", "for", "crash"])
        at = 0
        self.for = 0
        try r.read("at", into: &at)
        try r.read("for", into: &self.for)
        try r.read("crash", into: &crash)
    }
}

extension Scenario.AdapterSpec {
    public init(from decoder: any Decoder) throws {
        let r = try DefaultingReader(
            decoder,
            allowed: ["address", "powered", "alias", "seesSensors", "reportsRSSI"]
        )
        try r.read("address", into: &address)
        try r.read("powered", into: &powered)
        try r.read("alias", into: &alias)
        try r.read("seesSensors", into: &seesSensors)
        try r.read("reportsRSSI", into: &reportsRSSI)
    }
}

extension Scenario.SensorSpec {
    public init(from decoder: any Decoder) throws {
        let r = try DefaultingReader(
            decoder,
            allowed: [
                "model", "count", "name", "address", "profile", "rate", "rr", "energy", "contact", "energyStart",
                "requiresPairing", "paired", "faults", "gapName", "mtu", "acquire", "pmd",
            ]
        )
        try r.read("model", into: &model)
        try r.read("count", into: &count)
        try r.read("name", into: &name)
        try r.read("address", into: &address)
        try r.read("profile", into: &profile)
        try r.read("rate", into: &rate)
        try r.read("rr", into: &rr)
        try r.read("energy", into: &energy)
        try r.read("contact", into: &contact)
        try r.read("energyStart", into: &energyStart)
        try r.read("requiresPairing", into: &requiresPairing)
        try r.read("paired", into: &paired)
        try r.read("faults", into: &faults)
        try r.read("gapName", into: &gapName)
        try r.read("mtu", into: &mtu)
        try r.read("acquire", into: &acquire)
        try r.read("pmd", into: &pmd)
    }
}

extension Scenario.ProfileSpec {
    public init(from decoder: any Decoder) throws {
        let r = try DefaultingReader(
            decoder,
            allowed: ["kind", "bpm", "from", "to", "duration", "low", "high", "work", "rest"]
        )
        try r.read("kind", into: &kind)
        try r.read("bpm", into: &bpm)
        try r.read("from", into: &from)
        try r.read("to", into: &to)
        try r.read("duration", into: &duration)
        try r.read("low", into: &low)
        try r.read("high", into: &high)
        try r.read("work", into: &work)
        try r.read("rest", into: &rest)
    }
}

extension Scenario.FaultSpec {
    public init(from decoder: any Decoder) throws {
        let r = try DefaultingReader(decoder, allowed: ["kind", "at", "for", "every", "bpm", "value", "rate", "rr"])
        guard
            let kind = try r.container.decodeIfPresent(Kind.self, forKey: AnyKey(stringValue: "kind"))
        else {
            throw DecodingError.keyNotFound(
                AnyKey(stringValue: "kind"),
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "a fault needs a kind: disconnect, drop, malformed, contact-loss, ectopic, missed-beat, "
                        + "impossible-heart-rate, energy-jump, storm or flap"
                )
            )
        }
        self.kind = kind
        try r.read("at", into: &at)
        try r.read("for", into: &self.for)
        try r.read("every", into: &every)
        try r.read("bpm", into: &bpm)
        try r.read("value", into: &value)
        try r.read("rate", into: &rate)
        try r.read("rr", into: &rr)
    }
}

// MARK: - Loading and checking

extension Scenario {
    /// Why a scenario cannot be played.
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads a scenario file, with errors that name the file and the problem.
    public static func load(path: String) throws(Invalid) -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Invalid(description: "cannot read scenario file \(path)")
        }
        let scenario: Scenario
        do {
            scenario = try JSONDecoder().decode(Scenario.self, from: data)
        } catch let error as DecodingError {
            throw Invalid(description: "\(path): \(Self.explain(error))")
        } catch {
            throw Invalid(description: "\(path): \(error)")
        }
        try scenario.validate()
        return scenario
    }

    private static func explain(_ error: DecodingError) -> String {
        func at(_ path: [any CodingKey]) -> String {
            path.isEmpty
                ? "" : " at " + path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context): return context.debugDescription + at(context.codingPath)
        case .keyNotFound(let key, let context): return "missing '\(key.stringValue)'\(at(context.codingPath))"
        case .typeMismatch(let type, let context): return "expected \(type)\(at(context.codingPath))"
        case .valueNotFound(let type, let context): return "expected \(type)\(at(context.codingPath))"
        @unknown default: return "\(error)"
        }
    }

    /// Checks values that decode but make no sense.
    public func validate() throws(Invalid) {
        if mirrorPairing, adapters.count < 2 {
            throw Invalid(description: "mirrorPairing needs two adapters: the central and the sensors' own")
        }
        for (index, sensor) in sensors.enumerated() {
            let name = "sensors[\(index)]"
            guard sensor.count >= 1 else { throw Invalid(description: "\(name).count must be at least 1") }
            if sensor.count > 1, sensor.name != nil || sensor.address != nil {
                throw Invalid(description: "\(name): name and address only make sense with count 1")
            }
            if let rate = sensor.rate, !(rate > 0 && rate <= 1000) {
                throw Invalid(description: "\(name).rate must be between 0 and 1000 notifications per second")
            }
            let bpms = [
                sensor.profile.bpm, sensor.profile.from, sensor.profile.to, sensor.profile.low, sensor.profile.high,
            ]
            guard bpms.allSatisfy({ $0 >= 20 && $0 <= 250 }) else {
                throw Invalid(description: "\(name).profile: heart rates must be between 20 and 250 bpm")
            }
            for fault in sensor.faults where fault.kind == .malformed && fault.every < 1 {
                throw Invalid(description: "\(name): a malformed fault needs every ≥ 1")
            }
            // Every beat premature (or missed) would be a heart at another rate (or no RR at all), not an artifact.
            for (position, fault) in sensor.faults.enumerated()
            where FaultSpec.beatKinds.contains(fault.kind) && fault.every < 2 {
                throw Invalid(
                    description:
                        "\(name).faults[\(position)]: a fault of kind \(fault.kind.rawValue) needs every ≥ 2 (beats)"
                )
            }
            try validateHostile(sensor, name)
            if let pmd = sensor.pmd {
                guard sensor.model == .polarH10 else {
                    throw Invalid(description: "\(name).pmd: only a polar-h10 offers Polar's Measurement Data service")
                }
                try pmd.validate(name)
            }
        }
        for (index, adapter) in adapters.enumerated() {
            try Self.checkDBusString(adapter.alias, "adapters[\(index)].alias")
        }
    }

    private func validateHostile(_ sensor: SensorSpec, _ name: String) throws(Invalid) {
        try Self.checkDBusString(sensor.name, "\(name).name")
        try Self.checkDBusString(sensor.gapName, "\(name).gapName")
        guard (0...1_000_000).contains(sensor.acquire.dropFirst) else {
            throw Invalid(description: "\(name).acquire.dropFirst must be between 0 and 1000000 notifications")
        }
        if let breakAfter = sensor.acquire.breakAfter, !(breakAfter >= 0 && breakAfter <= 86400) {
            throw Invalid(description: "\(name).acquire.breakAfter must be between 0 and 86400 seconds")
        }
        let mtu = sensor.effectiveMTU
        guard (23...517).contains(mtu) else {
            throw Invalid(description: "\(name).mtu must be between 23 (the LE minimum) and 517 (bluetoothd's most)")
        }
        // Checked with the 16-bit heart rate, so that an impossible heart rate during the storm still fits.
        let stormCapacity = HeartRateMeasurement.maximumRRIntervalCount(
            format: .uint16,
            includesEnergyExpended: false,
            attMTU: mtu
        )
        for (position, fault) in sensor.faults.enumerated() {
            let place = "\(name).faults[\(position)]"
            if FaultSpec.windowed.contains(fault.kind), !(fault.for > 0) {
                throw Invalid(description: "\(place): a \(fault.kind.rawValue) fault needs a window: for > 0 seconds")
            }
            switch fault.kind {
            case .energyJump where fault.effectiveEvery < 2:
                throw Invalid(description: "\(place): an energy-jump needs every ≥ 2 (a cycle of one never jumps)")
            case .storm where !(fault.effectiveRate > 0 && fault.effectiveRate <= 10_000):
                throw Invalid(
                    description: "\(place): a storm's rate must be between 0 and 10000 notifications a second"
                )
            case .storm where !(0...255).contains(fault.rr):
                throw Invalid(description: "\(place): a storm's rr must be between 0 and 255 intervals")
            case .storm where fault.rr > stormCapacity:
                throw Invalid(
                    description: "\(place): \(fault.rr) RR intervals do not fit a notification at an ATT MTU of "
                        + "\(mtu) (\(mtu - 3) bytes); raise \(name).mtu (at most 517, which holds 255)"
                )
            case .flap where !(fault.effectiveRate > 0 && fault.effectiveRate <= 100):
                throw Invalid(description: "\(place): a flap's rate must be between 0 and 100 drops a second")
            default: break
            }
        }
    }

    /// D-Bus strings are UTF-8 without NUL: any other character, escapes included, reaches D-Bus as given.
    private static func checkDBusString(_ text: String?, _ place: String) throws(Invalid) {
        guard let text, text.utf8.contains(0) else { return }
        throw Invalid(description: "\(place) contains NUL (\\u0000), which a D-Bus string cannot carry")
    }
}
