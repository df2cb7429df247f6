extension Scenario {
    /// The presets `systole-sim --preset` plays.
    public enum Preset: String, Sendable, CaseIterable {
        /// ``Scenario/hostileNeighbour``.
        case hostileNeighbour = "hostile-neighbour"

        /// The scenario the preset names.
        public var scenario: Scenario {
            switch self {
            case .hostileNeighbour: .hostileNeighbour
            }
        }
    }

    /// The honest strap of ``hostileNeighbour``: its address and name.
    public static let honestStrapAddress = "A0:9E:1A:00:AA:AA"
    /// The hostile device of ``hostileNeighbour``: its address.
    public static let hostileDeviceAddress = "A0:9E:1A:66:66:66"

    /// An attacker beside an honest strap, for end-to-end tests and the demo (docs/simulator.md, "Hostile
    /// devices"). Sensor 0 is an honest Polar H10 at 1 Hz, steady 132 bpm, at ``honestStrapAddress``. Sensor 1
    /// advertises the Heart Rate service at ``hostileDeviceAddress``, notifies at 4 Hz, and is hostile all along by
    /// its names: the advertised name clears the screen, sets the terminal's title with an OSC sequence ending in
    /// BEL, returns the carriage and copies the honest strap's name, with a newline; its GAP Device Name (shown
    /// once services resolve) is a colour escape and 10 000 characters. Its payloads turn hostile at set times:
    /// 65535 bpm from 2 s, 400 bpm from 6 s, energy 0 → 65534 kJ cycles of 12 notifications (3 s) from 10 s,
    /// a storm of 1000 notifications a second with 255 RR intervals each from 22 s, the link flapping 20 times a
    /// second from 27 s, and honest-looking notifications from 30 s on.
    public static var hostileNeighbour: Scenario {
        var scenario = Scenario()
        scenario.seed = 23
        var honest = SensorSpec(model: .polarH10)
        honest.address = honestStrapAddress
        honest.name = "Polar H10 0000AAAA"
        honest.profile.bpm = 132
        var hostile = SensorSpec(model: .polarH10)
        hostile.address = hostileDeviceAddress
        hostile.name = "\u{1B}[2J\u{1B}[H\u{1B}]0;systole: all good\u{07}\rPolar H10 0000AAAA\n"
        hostile.gapName = "\u{1B}[31m" + String(repeating: "A", count: 10_000)
        hostile.rate = 4
        hostile.profile.bpm = 150
        var fullScale = FaultSpec(.impossibleHeartRate, at: 2, for: 4)
        fullScale.bpm = 65535
        var tooFast = FaultSpec(.impossibleHeartRate, at: 6, for: 4)
        tooFast.bpm = 400
        var jumps = FaultSpec(.energyJump, at: 10, for: 12, every: 12)
        jumps.value = 65534
        var storm = FaultSpec(.storm, at: 22, for: 5)
        storm.rate = 1000
        storm.rr = 255
        var flap = FaultSpec(.flap, at: 27, for: 3)
        flap.rate = 20
        hostile.faults = [fullScale, tooFast, jumps, storm, flap]
        scenario.sensors = [honest, hostile]
        return scenario
    }
}
