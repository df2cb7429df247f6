/// SplitMix64: a small, fast generator whose sequence depends only on the seed, so a scenario with a given seed
/// always produces the same payloads.
struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A normally distributed value (Box–Muller).
    mutating func gaussian(mean: Double = 0, deviation: Double = 1) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return mean + deviation * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

#if canImport(Glibc)
import Glibc
#endif
