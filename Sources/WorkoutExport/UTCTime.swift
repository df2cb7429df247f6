import Foundation

/// Times as the text exports write them: ISO 8601 in UTC, to the millisecond, with a `Z`
/// (`2026-11-22T10:00:00.000Z`), the form xsd:dateTime (TCX), spreadsheets and Python's `datetime` all read.
///
/// A formatter remembers the last day it wrote, because a workout's readings come a second apart and share it.
struct UTCTime {
    /// The earliest and latest times written: a date outside is clamped, so an absurd stored date gives an absurd
    /// but valid time rather than a trap or a year of five digits, which xsd:dateTime readers differ on.
    static let earliest = Date(timeIntervalSince1970: 0)
    static let latest = Date(timeIntervalSince1970: 253_402_300_799.999)  // 9999-12-31T23:59:59.999Z

    private let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }()
    private var cachedDay: Int64?
    private var cachedDayText = ""

    /// The date's text, rounded to the millisecond.
    mutating func text(_ date: Date) -> String {
        func two(_ value: Int64) -> String { DecimalText.padded(Int(value), width: 2) }
        let seconds = date.timeIntervalSince1970
        let clamped =
            seconds.isFinite
            ? min(max(seconds, Self.earliest.timeIntervalSince1970), Self.latest.timeIntervalSince1970) : 0
        let milliseconds = Int64((clamped * 1000).rounded())
        let day = milliseconds / 86_400_000  // never negative: clamped at the epoch
        if day != cachedDay {
            let parts = calendar.dateComponents(
                [.year, .month, .day],
                from: Date(timeIntervalSince1970: Double(day) * 86_400)
            )
            let year = DecimalText.padded(parts.year ?? 1970, width: 4)
            cachedDayText = "\(year)-\(two(Int64(parts.month ?? 1)))-\(two(Int64(parts.day ?? 1)))"
            cachedDay = day
        }
        let inDay = milliseconds - day * 86_400_000
        let clock = "\(two(inDay / 3_600_000)):\(two(inDay / 60_000 % 60)):\(two(inDay / 1000 % 60))"
        return "\(cachedDayText)T\(clock).\(DecimalText.padded(Int(inDay % 1000), width: 3))Z"
    }
}
