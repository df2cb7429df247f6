import DBus
import Foundation
import SafeText
import WorkoutImport
import WorkoutKit

/// An activity file's activities as `systole import` sends them to systoled's `ImportWorkouts`
/// (docs/dbus-api.md): one `(a{sv} au ad au)` per activity, with its values, its heart-rate readings' times
/// (milliseconds after the start) and values (bpm), and its RR intervals (microseconds). Numbers in arrays of
/// their own keep the most a file may hold (400 000 readings) to about 5 MB, far below a bus's 32 MiB message limit.
public enum ImportValues {
    public static let activityType = DBusType.structure([
        DBusType.propertyMap, .array(.uint32), .array(.double), .array(.uint32),
    ])
    /// The method's argument: the activities of one file.
    public static let type = DBusType.array(activityType)
    /// The method's answer: each activity's workout id, and whether it was saved (false: it was already there).
    public static let outcomeType = DBusType.array(outcomeElement)
    /// One activity's answer: its workout's id, and whether it was saved.
    public static let outcomeElement = DBusType.structure([.string, .boolean])

    public static func value(of activities: [ImportedActivity]) -> DBusValue {
        .array(activityType, activities.map(value(of:)))
    }

    static func value(of activity: ImportedActivity) -> DBusValue {
        var map: [String: DBusValue] = [
            "format": .string(activity.format.rawValue),
            "activity": .string(activity.activity.name),
            "start": .double(activity.start.timeIntervalSince1970),
            "end": .double(activity.end.timeIntervalSince1970),
            "pauses": intervals(activity.pauses),
            "laps": intervals(activity.laps),
        ]
        if let energy = activity.energyKilocalories { map["energy"] = .double(energy) }
        if let name = activity.recorder.manufacturer { map["manufacturer"] = .string(name) }
        if let name = activity.recorder.product { map["product"] = .string(name) }
        if let serial = activity.recorder.serialNumber { map["serialNumber"] = .string(serial) }
        let times = activity.heartRates.map { reading in
            DBusValue.uint32(UInt32(clamping: Int((reading.date.timeIntervalSince(activity.start) * 1000).rounded())))
        }
        return .structure([
            .propertyMap(map),
            .array(.uint32, times),
            .array(.double, activity.heartRates.map { .double($0.beatsPerMinute) }),
            .array(.uint32, activity.rrIntervals.map { .uint32(UInt32(clamping: Int(($0 * 1_000_000).rounded()))) }),
        ])
    }

    private static func intervals(_ intervals: [DateInterval]) -> DBusValue {
        .array(
            .structure([.double, .double]),
            intervals.map {
                .structure([.double($0.start.timeIntervalSince1970), .double($0.end.timeIntervalSince1970)])
            }
        )
    }

    /// The activities in a call's argument, or what is wrong with it. Only the form is checked here; the values
    /// are checked by ``ImportedActivity/check(_:now:)``.
    public static func activities(from value: DBusValue) throws(ImportError) -> [ImportedActivity] {
        guard case .array(activityType, let elements) = value else {
            throw ImportError("expected activities of type \(type.signature)")
        }
        guard elements.count <= ImportLimits.laps else {
            throw ImportError("more than \(ImportLimits.laps) activities in one file")
        }
        var activities: [ImportedActivity] = []
        for (index, element) in elements.enumerated() {
            do {
                activities.append(try activity(from: element))
            } catch {
                throw ImportError("activity \(index + 1): \(error.description)")
            }
        }
        return activities
    }

    private static func activity(from value: DBusValue) throws(ImportError) -> ImportedActivity {
        guard let fields = value.fields, fields.count == 4, let map = fields[0].propertyMap,
            let times = fields[1].array, let rates = fields[2].array, let rr = fields[3].array
        else { throw ImportError("not an activity of type \(activityType.signature)") }
        guard times.count == rates.count else {
            throw ImportError("\(times.count) heart-rate times for \(rates.count) heart rates")
        }
        guard times.count + rr.count <= ImportLimits.readings else {
            throw ImportError("more than \(ImportLimits.readings) heart-rate readings and RR intervals")
        }
        let formatName = try text(map, "format")
        guard let format = ImportedActivity.Format(rawValue: formatName) else {
            throw ImportError("an unknown format \(formatName.quotedExcerpt())")
        }
        let activityName = try text(map, "activity")
        guard let activity = WorkoutActivityType(name: activityName) else {
            throw ImportError("an unknown activity \(activityName.quotedExcerpt())")
        }
        let start = Date(timeIntervalSince1970: try number(map, "start"))
        var heartRates: [ImportedActivity.HeartRate] = []
        heartRates.reserveCapacity(times.count)
        for (time, rate) in zip(times, rates) {
            guard case .uint32(let milliseconds) = time, case .double(let bpm) = rate else {
                throw ImportError("a heart-rate reading that is not a time and a number")
            }
            heartRates.append(.init(date: start + Double(milliseconds) / 1000, beatsPerMinute: bpm))
        }
        var rrIntervals: [Double] = []
        rrIntervals.reserveCapacity(rr.count)
        for interval in rr {
            guard case .uint32(let microseconds) = interval else { throw ImportError("an RR interval not in µs") }
            rrIntervals.append(Double(microseconds) / 1_000_000)
        }
        return ImportedActivity(
            format: format,
            activity: activity,
            start: start,
            end: Date(timeIntervalSince1970: try number(map, "end")),
            pauses: try intervals(map, "pauses"),
            laps: try intervals(map, "laps"),
            heartRates: heartRates,
            rrIntervals: rrIntervals,
            energyKilocalories: try map["energy"].map { value throws(ImportError) in try number(value, "energy") },
            recorder: ImportedActivity.Recorder(
                manufacturer: try optionalText(map, "manufacturer"),
                product: try optionalText(map, "product"),
                serialNumber: try optionalText(map, "serialNumber")
            )
        )
    }

    private static func text(_ map: [String: DBusValue], _ key: String) throws(ImportError) -> String {
        guard let text = try optionalText(map, key) else { throw ImportError("no \(key)") }
        return text
    }

    private static func optionalText(_ map: [String: DBusValue], _ key: String) throws(ImportError) -> String? {
        guard let value = map[key] else { return nil }
        guard let text = value.string else { throw ImportError("\(key) is not a string") }
        return text
    }

    private static func number(_ map: [String: DBusValue], _ key: String) throws(ImportError) -> Double {
        guard let value = map[key] else { throw ImportError("no \(key)") }
        return try number(value, key)
    }

    private static func number(_ value: DBusValue, _ key: String) throws(ImportError) -> Double {
        guard let number = value.double, number.isFinite else { throw ImportError("\(key) is not a finite number") }
        return number
    }

    /// Intervals of an `a(dd)`; one that ends before it starts is refused here (a `DateInterval` cannot hold it).
    private static func intervals(_ map: [String: DBusValue], _ key: String) throws(ImportError) -> [DateInterval] {
        guard let value = map[key] else { return [] }
        guard case .array(.structure([.double, .double]), let elements) = value else {
            throw ImportError("\(key) is not an array of (start, end)")
        }
        var intervals: [DateInterval] = []
        for element in elements {
            guard let pair = element.fields, pair.count == 2, let start = pair[0].double, let end = pair[1].double,
                start.isFinite, end.isFinite, end >= start
            else { throw ImportError("one of the \(key) ends before it starts or is not a time") }
            intervals.append(
                DateInterval(start: Date(timeIntervalSince1970: start), end: Date(timeIntervalSince1970: end))
            )
        }
        return intervals
    }
}
