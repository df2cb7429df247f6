import ControlAPI
import DBus
import Foundation
import SystoleTestSupport

/// Random control-API calls, as a hostile caller in group systole would make them: every method (and unknown
/// ones), right and wrong signatures, and values at the edges (extremes, NaN, ±inf, huge strings and counts,
/// control characters, deep containers). Deterministic for a seed.
struct ControlAPIFuzzer {
    private var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed &+ 0x9E37_79B9_7F4A_7C15) }

    private mutating func next() -> UInt64 { random.next() }

    private mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    private mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// The methods and the types they take.
    static let methods: [(String, [DBusType])] = [
        ("StartWorkout", [.string, .string]),
        ("PauseWorkout", []),
        ("ResumeWorkout", []),
        ("EndWorkout", []),
        ("CancelWorkout", []),
        ("AddSample", [.string, .double, .string]),
        ("ListSensors", []),
        ("Scan", [.double]),
        ("Pair", [.string]),
        ("Forget", [.string]),
        ("ListWorkouts", []),
        ("GetWorkout", [.string]),
        ("Statistics", [.string, .string, .double, .double]),
        ("AddLap", []),
        ("AddMarker", [.string]),
        ("ExportWorkout", [.string, .string, .unixFD]),
        ("DeleteWorkout", [.string]),
        ("GetProfile", []),
        ("ImportWorkouts", [ImportValues.type]),
        ("GetTrends", [.double, .double, .string]),
    ]

    /// Opened once for every call that passes a descriptor (each call's message holds a copy of its own).
    static let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)

    static let words = [
        "heartRate", "activeEnergyBurned", "dietaryWater", "heartbeatSeries", "running", "cycling", "outdoor",
        "indoor", "unknown", "kcal", "kJ", "mL", "L", "count/min", "1m", "15m", "1h", "1d", "1w", "0m", "-1d",
        "9223372036854775807m", "1317624576693539402w", "A0:9E:1A:12:34:56", "00:00:00:00:00:00", "any", "",
    ]

    static let intervals = [
        "1m", "15m", "1h", "1d", "1w", "0m", "-1d", "1y", "9223372036854775807m", "1317624576693539402w",
        "99999999999999999999d", "527041m", "367d",
    ]

    /// A time at the edges: beyond any calendar, not a number, or near now.
    mutating func edgeTime() -> Double {
        pick([-.infinity, .infinity, .nan, -1e300, 1e300, -1, 0, 2e9, 4_102_444_800, Date().timeIntervalSince1970])
    }

    mutating func string() -> String {
        switch below(24) {
        case 0: return String(repeating: pick(["A", "é", "\u{1B}[2J", "\u{0}", "%s", "'"]), count: 1 + below(200_000))
        case 1: return "\u{1B}]0;title\u{07}\r\n" + pick(Self.words)
        case 2: return String(decoding: (0..<below(64)).map { _ in UInt8(truncatingIfNeeded: next()) }, as: UTF8.self)
        case 3: return pick(Self.words).uppercased()
        default: return pick(Self.words)
        }
    }

    mutating func double() -> Double {
        switch below(6) {
        case 0: return pick([.nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude])
        case 1: return pick([0, -0.0, .leastNonzeroMagnitude, 1e-300, 1e300, 4_102_444_800, 4_102_444_801])
        case 2: return Double(bitPattern: next())
        case 3: return Double(Int64(bitPattern: next()) % 4_000_000_000)
        default: return Date().timeIntervalSince1970 + Double(below(200_000)) - 100_000
        }
    }

    /// A value of `type`, or of any type when nil.
    mutating func value(_ type: DBusType?, depth: Int = 0) -> DBusValue {
        let type = type ?? pick([.string, .double, .int64, .uint32, .boolean, .byte, .objectPath, .variant])
        switch type {
        case .string: return .string(string().replacingOccurrences(of: "\u{0}", with: ""))
        case .double: return .double(double())
        case .int64: return .int64(pick([.min, .max, 0, -1, Int64(bitPattern: next())]))
        case .uint32: return .uint32(pick([.max, 0, UInt32(truncatingIfNeeded: next())]))
        case .boolean: return .boolean(below(2) == 0)
        case .byte: return .byte(UInt8(truncatingIfNeeded: next()))
        case .objectPath: return .objectPath(pick(["/", "/org/systole/Daemon", "/a/b/c"]))
        // A descriptor the export may write into: /dev/null, as a caller's pipe would take it.
        case .unixFD: return .unixFD(Self.devNull)
        default:
            if depth < 30, below(3) == 0 {
                return .variant(value(nil, depth: depth + 1))
            }
            if below(2) == 0 {
                return .array(.double, (0..<below(1_000)).map { _ in .double(double()) })
            }
            return .variant(.string(string().replacingOccurrences(of: "\u{0}", with: "")))
        }
    }

    /// The next call: interface, method and arguments.
    mutating func nextCall() -> (String?, String, [DBusValue]) {
        switch below(20) {
        case 0:
            // Properties, with names and values of any kind.
            let member = pick(["Get", "GetAll", "Set"])
            var arguments: [DBusValue] = [
                .string(below(3) == 0 ? string().replacingOccurrences(of: "\u{0}", with: "") : ControlAPI.interface)
            ]
            if member != "GetAll" { arguments.append(.string(pick(["State", "HeartRate", "Sensors", "Nope"]))) }
            if member == "Set" { arguments.append(.variant(value(nil))) }
            return ("org.freedesktop.DBus.Properties", member, arguments)
        case 1:
            return (ControlAPI.interface, pick(["Nope", "startworkout", "Start_Workout"]), [value(nil)])
        case 2:
            return (nil, pick(Self.methods).0, [])
        default:
            let (method, types) = pick(Self.methods)
            // Scan and Pair talk to the radio and take seconds: call them with wrong arguments mostly.
            let slow = method == "Scan" || method == "Pair"
            if below(4) == 0 || (slow && below(8) != 0) {
                return (ControlAPI.interface, method, (0..<below(5)).map { _ in value(nil) })
            }
            var arguments = types.map { value($0) }
            if method == "Scan" { arguments = [.double(pick([0, -1, .nan, .infinity, 61, 0.05]))] }
            // The arguments whose arithmetic matters most get edge values more often than chance would give them.
            if method == "Statistics", below(2) == 0 {
                arguments = [
                    .string(pick(["heartRate", "activeEnergyBurned", "dietaryWater"])),
                    .string(pick(Self.intervals)), .double(edgeTime()), .double(edgeTime()),
                ]
            }
            if method == "ExportWorkout", below(2) == 0 {
                arguments = [
                    .string(pick(["", "0", "a", "-", "%"])), .string(pick(["fit", "tcx", "csv", "rr", "FIT"])),
                    .unixFD(Self.devNull),
                ]
            }
            if method == "AddSample", below(2) == 0 {
                arguments = [
                    .string(pick(["heartRate", "activeEnergyBurned", "dietaryWater"])),
                    .double(pick([1e308, .greatestFiniteMagnitude, 1e9, 5_000, 5_001, 1, .infinity, .nan, -1])),
                    .string(pick(["count/min", "kcal", "kJ", "mL", "L"])),
                ]
            }
            if method == "ImportWorkouts", below(4) != 0 { arguments = [activities()] }
            if method == "GetTrends", below(2) == 0 {
                arguments = [.double(edgeTime()), .double(edgeTime()), .string(pick(["", "Ana", "\u{1B}[2J"]))]
            }
            return (ControlAPI.interface, method, arguments)
        }
    }

    /// An activity file's activities as a caller could make them up: dates and counts at the edges, wrong types,
    /// arrays of different lengths; now and then one that is valid.
    mutating func activities() -> DBusValue {
        func intervals() -> DBusValue {
            .array(
                .structure([.double, .double]),
                (0..<below(4)).map { _ in .structure([.double(edgeTime()), .double(edgeTime())]) }
            )
        }
        return .array(
            ImportValues.activityType,
            (0..<below(3)).map { _ in
                let start = edgeTime()
                var map: [String: DBusValue] = [
                    "format": .string(pick(["FIT", "TCX", "GPX", ""])),
                    "activity": .string(pick(["running", "cycling", "flying"])),
                    "start": .double(start),
                    "end": .double(below(2) == 0 ? start + Double(below(3600)) : edgeTime()),
                ]
                if below(2) == 0 { map["pauses"] = intervals() }
                if below(2) == 0 { map["laps"] = intervals() }
                if below(2) == 0 { map["energy"] = .double(double()) }
                if below(2) == 0 { map["product"] = .string(string().replacingOccurrences(of: "\u{0}", with: "")) }
                if below(4) == 0 { map[pick(["format", "start", "laps", "energy", "product"])] = value(nil) }
                let count = below(50)
                let rates = below(8) == 0 ? below(50) : count
                return .structure([
                    .propertyMap(map),
                    .array(.uint32, (0..<count).map { _ in .uint32(pick([0, 1000, 3_600_000, .max])) }),
                    .array(.double, (0..<rates).map { _ in .double(pick([60, 90, 250, 251, .nan, double()])) }),
                    .array(.uint32, (0..<below(50)).map { _ in .uint32(pick([0, 600_000, 5_000_001, .max])) }),
                ])
            }
        )
    }
}
