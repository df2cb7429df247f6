import Foundation
import SQLiteStore
import SafeText

/// The ranges a `Statistics` call's arguments must lie in, each with the limit named when it is not: any caller
/// in group systole may send any number, and the store's calendar arithmetic must only ever see sane ones.
enum StatisticsRequest {
    /// Why a request is refused, for an `InvalidArguments` reply.
    struct Refusal: Error {
        var message: String
    }

    /// Times from 1970 up to 2100: before them no sensor recorded anything, after them no clock is right.
    static let earliest = Date(timeIntervalSince1970: 0)
    static let latest = Date(timeIntervalSince1970: 4_102_444_800)
    /// The longest bucket: a year (366 days).
    static let longestBucket: TimeInterval = 366 * 86_400
    /// The most buckets one call returns (two weeks of minutes; 54 years of days).
    static let maximumBuckets = 20_160

    /// `1m`, `15m`, `1h`, `1d`, `1w`: a whole number from 1, then m, h, d or w, at most a year long.
    static func interval(_ text: String) throws(Refusal) -> StatisticsInterval {
        let usage = "use a whole number and m, h, d or w, like 1m, 15m, 1h, 1d or 1w"
        guard text.utf8.count <= 24, let unit = text.last, let count = Int(text.dropLast()), count > 0 else {
            throw Refusal(message: "unknown interval \(text.quotedExcerpt()); \(usage)")
        }
        let interval: StatisticsInterval
        switch unit {
        case "m": interval = .minutes(count)
        case "h": interval = .hours(count)
        case "d": interval = .days(count)
        case "w": interval = .weeks(count)
        default: throw Refusal(message: "unknown interval \(text.quotedExcerpt()); \(usage)")
        }
        guard interval.nominalLength <= longestBucket else {
            throw Refusal(message: "the interval \(text.quotedExcerpt()) is longer than a year (366d, 52w); \(usage)")
        }
        return interval
    }

    /// A time in seconds since 1970, finite and from 1970 to 2100.
    static func date(_ seconds: Double, _ name: String) throws(Refusal) -> Date {
        guard seconds.isFinite, seconds >= earliest.timeIntervalSince1970, seconds <= latest.timeIntervalSince1970
        else {
            throw Refusal(
                message: "'\(name)' must be a time from 1970-01-01 to 2100-01-01 in seconds since 1970 "
                    + "(0 to \(Int(latest.timeIntervalSince1970))), not \(seconds)"
            )
        }
        return Date(timeIntervalSince1970: seconds)
    }

    /// `from` before `to`, and at most ``maximumBuckets`` buckets between them.
    static func checkRange(from: Date, to: Date, interval: StatisticsInterval) throws(Refusal) {
        guard from < to else { throw Refusal(message: "'from' must be before 'to'") }
        let buckets = (to.timeIntervalSince(from) / interval.nominalLength).rounded(.up)
        guard buckets <= Double(maximumBuckets) else {
            throw Refusal(
                message: "that range holds \(Int(buckets)) buckets of this interval; at most \(maximumBuckets) "
                    + "are returned at once: choose a longer interval or a shorter range"
            )
        }
    }
}
