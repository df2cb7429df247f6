import Foundation
import SafeText

/// Polar's Measurement Data service (PMD) on a simulated strap: what it offers and how its ECG and accelerometer
/// behave, including the faults real H10s show (a clock off by some ppm, ECG starting late, repeated frames,
/// timestamps that step back) and hostile frames. See docs/simulator.md.
public struct PMDSpec: Codable, Sendable, Equatable {
    /// Whether ECG is offered (bit 0 of the control point's features).
    public var ecg = true
    /// Whether the accelerometer is offered (bit 2).
    public var acc = true
    /// The ECG's true sample rate, samples per second of the host's clock (real H10s run at 128–131 Hz).
    public var rate = 130.0
    /// How fast the strap's clock runs against the host's, in parts per million (positive: fast).
    public var clockPPM = 0.0
    /// Seconds between the start command and the first ECG frame (H10s have been seen to take about 30 s).
    public var startDelay = 0.0
    /// A file of µV values (numbers separated by white space or commas) played instead of the synthesized ECG,
    /// from its start, once through; the stream stops sending after its last value.
    public var ecgFile: String?
    /// Standard deviation of the synthesized ECG's noise, µV.
    public var noise = 10.0
    /// The control point answers only once the device is paired (some newer firmware): reads, writes and
    /// StartNotify fail with Insufficient Authentication before.
    public var requiresPairing = false
    /// Answer an ECG start with this status instead of success (13: the strap is in its charger).
    public var refuseECG: UInt8?
    /// Send every n-th frame twice (0: never).
    public var duplicateEvery = 0
    /// Every n-th frame carries a timestamp one second back (0: never); the frames after it continue as before.
    public var backwardEvery = 0
    /// Every n-th frame is hostile (0: never): in turn cut mid-sample, of an unknown layout, longer than an
    /// attribute, and of more samples than its time holds.
    public var hostileEvery = 0

    public init() {}

    /// The ECG samples a frame holds at an ATT MTU (the H10 sends 73 at its 232).
    static func ecgSamplesPerFrame(mtu: Int) -> Int { max(1, min(73, (mtu - 3 - 10) / 3)) }
    /// The accelerometer samples a frame holds (raw layout 1: six bytes a sample).
    static func accSamplesPerFrame(mtu: Int) -> Int { max(1, min(36, (mtu - 3 - 10) / 6)) }
}

extension PMDSpec {
    public init(from decoder: any Decoder) throws {
        let r = try DefaultingReader(
            decoder,
            allowed: [
                "ecg", "acc", "rate", "clockPPM", "startDelay", "ecgFile", "noise", "requiresPairing", "refuseECG",
                "duplicateEvery", "backwardEvery", "hostileEvery",
            ]
        )
        try r.read("ecg", into: &ecg)
        try r.read("acc", into: &acc)
        try r.read("rate", into: &rate)
        try r.read("clockPPM", into: &clockPPM)
        try r.read("startDelay", into: &startDelay)
        try r.read("ecgFile", into: &ecgFile)
        try r.read("noise", into: &noise)
        try r.read("requiresPairing", into: &requiresPairing)
        try r.read("refuseECG", into: &refuseECG)
        try r.read("duplicateEvery", into: &duplicateEvery)
        try r.read("backwardEvery", into: &backwardEvery)
        try r.read("hostileEvery", into: &hostileEvery)
    }

    func validate(_ name: String) throws(Scenario.Invalid) {
        guard (50...1000).contains(rate) else {
            throw Scenario.Invalid(description: "\(name).pmd.rate must be between 50 and 1000 samples a second")
        }
        guard abs(clockPPM) <= 10_000 else {
            throw Scenario.Invalid(description: "\(name).pmd.clockPPM must be between -10000 and 10000")
        }
        guard (0...3600).contains(startDelay) else {
            throw Scenario.Invalid(description: "\(name).pmd.startDelay must be between 0 and 3600 seconds")
        }
        guard (0...100_000).contains(noise) else {
            throw Scenario.Invalid(description: "\(name).pmd.noise must be between 0 and 100000 µV")
        }
        for (key, every) in [
            ("duplicateEvery", duplicateEvery), ("backwardEvery", backwardEvery), ("hostileEvery", hostileEvery),
        ] where every < 0 {
            throw Scenario.Invalid(description: "\(name).pmd.\(key) must be 0 (never) or more")
        }
    }

    /// The µV values of `ecgFile`, checked: at most ten million finite values within 24 bits.
    static func loadECG(path: String) throws(Scenario.Invalid) -> [Int32] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Scenario.Invalid(description: "cannot read the ECG file \(path)")
        }
        var values: [Int32] = []
        let separators = CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: ","))
        for (index, field) in String(decoding: data, as: UTF8.self).components(separatedBy: separators).lazy
            .filter({ !$0.isEmpty }).enumerated()
        {
            guard values.count < 10_000_000 else {
                throw Scenario.Invalid(description: "\(path): more than 10000000 values")
            }
            guard let value = Double(field), value.isFinite, abs(value) < 8_388_607 else {
                throw Scenario.Invalid(
                    description:
                        "\(path): value \(index + 1) (\(field.quotedExcerpt(maximum: 20))) is not a µV value within 24 bits"
                )
            }
            values.append(Int32(value.rounded()))
        }
        guard !values.isEmpty else { throw Scenario.Invalid(description: "\(path) holds no value") }
        return values
    }
}
