/// A unit of measure, HealthKit-style: a symbol, a dimension, and its size in the dimension's base unit.
public struct Unit: Hashable, Sendable, Codable, CustomStringConvertible {
    /// What the unit measures; only units of one dimension convert into each other.
    public enum Dimension: String, Hashable, Sendable, Codable {
        case frequency
        case energy
        case volume
        case count
        case time
    }

    public let symbol: String
    public let dimension: Dimension
    /// How many base units one of this unit is (base: count/min, kJ, mL, count, s).
    public let baseFactor: Double

    public init(symbol: String, dimension: Dimension, baseFactor: Double) {
        self.symbol = symbol
        self.dimension = dimension
        self.baseFactor = baseFactor
    }

    /// Beats per minute, written `count/min` as HealthKit does.
    public static let countPerMinute = Unit(symbol: "count/min", dimension: .frequency, baseFactor: 1)
    public static let kilojoule = Unit(symbol: "kJ", dimension: .energy, baseFactor: 1)
    /// The dietary kilocalorie (4.184 kJ).
    public static let kilocalorie = Unit(symbol: "kcal", dimension: .energy, baseFactor: 4.184)
    public static let milliliter = Unit(symbol: "mL", dimension: .volume, baseFactor: 1)
    public static let liter = Unit(symbol: "L", dimension: .volume, baseFactor: 1000)
    public static let count = Unit(symbol: "count", dimension: .count, baseFactor: 1)
    public static let second = Unit(symbol: "s", dimension: .time, baseFactor: 1)

    /// Every unit systole knows, for parsing user input.
    public static let known: [Unit] = [.countPerMinute, .kilojoule, .kilocalorie, .milliliter, .liter, .count, .second]

    /// The unit written `symbol` (as in `known`), e.g. "kcal" or "mL".
    public init?(symbol: String) {
        guard let unit = Self.known.first(where: { $0.symbol == symbol }) else { return nil }
        self = unit
    }

    public var description: String { symbol }
}

/// An amount in a unit.
public struct Quantity: Hashable, Sendable, Codable, CustomStringConvertible {
    public let value: Double
    public let unit: Unit

    public init(_ value: Double, _ unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// Why a quantity cannot be expressed in a unit.
    public struct IncompatibleUnit: Error, Hashable, Sendable, CustomStringConvertible {
        public let from: Unit
        public let to: Unit
        public var description: String { "\(from) (\(from.dimension)) cannot be converted to \(to) (\(to.dimension))" }
    }

    /// Whether the quantity can be expressed in `unit`.
    public func isCompatible(with unit: Unit) -> Bool { self.unit.dimension == unit.dimension }

    /// The value expressed in `unit`.
    public func doubleValue(for unit: Unit) throws(IncompatibleUnit) -> Double {
        guard isCompatible(with: unit) else { throw IncompatibleUnit(from: self.unit, to: unit) }
        return value * self.unit.baseFactor / unit.baseFactor
    }

    public var description: String { "\(value) \(unit)" }
}
