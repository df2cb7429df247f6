import Foundation

/// Statistics over quantity samples of one type (HealthKit's HKStatistics). Discrete types have average,
/// minimum, maximum and most recent; cumulative types have a sum.
public struct Statistics: Hashable, Sendable, Codable {
    public let quantityType: QuantityType
    public var startDate: Date
    public var endDate: Date
    /// Readings included (a series sample counts each of its readings).
    public private(set) var readingCount = 0
    private var total = 0.0
    private var minimum: Double?
    private var maximum: Double?
    private var mostRecentValue: Double?
    public private(set) var mostRecentDateInterval: ClosedRange<Date>?

    public init(quantityType: QuantityType, startDate: Date, endDate: Date) {
        self.quantityType = quantityType
        self.startDate = startDate
        self.endDate = endDate
    }

    /// Adds a sample's value (in the type's canonical unit). For a series sample of a discrete type, `minimum` and
    /// `maximum` may be given from its readings.
    public mutating func add(
        _ value: Double,
        count: Int = 1,
        start: Date,
        end: Date,
        minimum seriesMinimum: Double? = nil,
        maximum seriesMaximum: Double? = nil
    ) {
        readingCount += count
        switch quantityType.aggregationStyle {
        case .cumulative:
            total += value
        case .discrete:
            total += value * Double(count)
            minimum = min(minimum ?? .infinity, seriesMinimum ?? value)
            maximum = max(maximum ?? -.infinity, seriesMaximum ?? value)
        }
        if let latest = mostRecentDateInterval, end < latest.upperBound { return }
        mostRecentValue = value
        mostRecentDateInterval = start...end
    }

    /// Takes the most recent reading of `other` (used when statistics are computed in parts).
    public mutating func mergeMostRecent(from other: Statistics) {
        guard let interval = other.mostRecentDateInterval else { return }
        mostRecentValue = other.mostRecentValue
        mostRecentDateInterval = interval
    }

    private func quantity(_ value: Double) -> Quantity { Quantity(value, quantityType.canonicalUnit) }

    /// Mean of the readings (discrete types).
    public func averageQuantity() -> Quantity? {
        guard quantityType.aggregationStyle == .discrete, readingCount > 0 else { return nil }
        return quantity(total / Double(readingCount))
    }

    public func minimumQuantity() -> Quantity? {
        guard quantityType.aggregationStyle == .discrete else { return nil }
        return minimum.map(quantity)
    }

    public func maximumQuantity() -> Quantity? {
        guard quantityType.aggregationStyle == .discrete else { return nil }
        return maximum.map(quantity)
    }

    /// The latest sample's value (discrete types).
    public func mostRecentQuantity() -> Quantity? {
        guard quantityType.aggregationStyle == .discrete else { return nil }
        return mostRecentValue.map(quantity)
    }

    /// The total (cumulative types).
    public func sumQuantity() -> Quantity? {
        guard quantityType.aggregationStyle == .cumulative, readingCount > 0 else { return nil }
        return quantity(total)
    }
}
