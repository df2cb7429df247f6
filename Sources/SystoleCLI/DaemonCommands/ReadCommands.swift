import ArgumentParser
import DBus
import Foundation
import WorkoutKit

/// `systole status`: the workout, the latest heart rate and the sensors.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the workout's state, elapsed time, heart rate and sensors."
    )
    @OptionGroup var daemon: ControlOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let client = try await daemon.connect()
        let state = try await client.property("State").string ?? "?"
        let workout = try await client.property("CurrentWorkout").map
        let all = try await client.property("Workouts").array ?? []
        let heartRate = try await client.property("HeartRate").map
        let sensors = try await client.property("Sensors").array ?? []
        // Off (NotFound) without [replication].
        let replication = (try? await client.call("GetReplication"))?.first?.map
        if json {
            var object: [String: Any] = [
                "state": state,
                "workout": DBusValue.propertyMap(workout).jsonObject,
                "workouts": all.map(\.jsonObject),
                "heartRate": DBusValue.propertyMap(heartRate).jsonObject,
                "sensors": sensors.map(\.jsonObject),
            ]
            if let replication { object["replication"] = DBusValue.propertyMap(replication).jsonObject }
            printJSON(object)
            return
        }
        if workout.isEmpty {
            print("No workout (start one with 'systole start')")
        } else {
            print("State: \(state)")
            if let team = workout["teamSession"]?.string {
                print("Team session \(team): \(all.count) workouts")
                for member in all.map(\.map) { print("Workout: " + WorkoutText.summary(member)) }
            } else {
                print("Workout: " + WorkoutText.summary(workout))
            }
            if let problem = workout["storeError"]?.string {
                print("Not saving: \(problem) (readings are kept in memory and saved once the store takes them)")
            }
        }
        if let bpm = heartRate["bpm"]?.number, let age = heartRate["age"]?.number {
            print("Heart rate: \(WorkoutText.whole(bpm)) bpm (\(age < 1 ? "now" : "\(WorkoutText.whole(age)) s ago"))")
        } else {
            print("Heart rate: none (no sensor is sending)")
        }
        SensorsCommand.printSensors(sensors)
        if let replication { print("Replication: " + Self.replicationText(replication)) }
    }

    /// `room-1 → postgresql://systole@db:5432/systole: up to date` or what waits and why.
    static func replicationText(_ values: [String: DBusValue]) -> String {
        let target =
            "\(WorkoutText.printable(values["receiver"]?.string ?? "?")) → "
            + WorkoutText.printable(values["address"]?.string ?? "?")
        var parts: [String] = []
        if let problem = values["problem"]?.string {
            parts.append("not reached (\(WorkoutText.printable(problem)))")
        } else if values["caughtUp"]?.bool == true {
            parts.append("up to date")
        } else {
            parts.append("sending")
        }
        if let samples = values["waitingSamples"]?.number, samples > 0 {
            var waiting = "\(WorkoutText.whole(samples)) samples waiting"
            if let oldest = values["oldestWaiting"]?.number {
                waiting += " since \(WorkoutText.date(.double(oldest)))"
            }
            parts.append(waiting)
        }
        if let dropped = values["droppedSamples"]?.number, dropped > 0 {
            parts.append("\(WorkoutText.whole(dropped)) samples left out (the backlog was full)")
        }
        if let copied = values["storeCopied"]?.number {
            parts.append(
                "the store was found to be a copy at \(WorkoutText.date(.double(copied))) and replicates as a new store "
                    + "since (see the log)"
            )
        }
        return target + ": " + parts.joined(separator: "; ")
    }
}

/// `systole sensors`: the configured sensors and how they are doing.
struct SensorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sensors",
        abstract: "List the sensors systoled keeps connected: battery, location, contact, and how notifications travel."
    )
    @OptionGroup var daemon: ControlOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let sensors = try await daemon.connect().call("ListSensors").first?.array ?? []
        if json {
            printJSON(sensors.map(\.jsonObject))
        } else {
            Self.printSensors(sensors)
        }
    }

    static func printSensors(_ sensors: [DBusValue]) {
        if sensors.isEmpty { print("Sensors: none configured") }
        for sensor in sensors.map(\.map) {
            var parts = [sensor["name"]?.string ?? sensor["address"]?.string ?? "any heart-rate sensor"]
            if let address = sensor["address"]?.string, sensor["name"] != nil { parts.append(address) }
            if let athlete = sensor["athlete"]?.string { parts.append("worn by \(WorkoutText.printable(athlete))") }
            parts.append(sensor["state"]?.string ?? "?")
            if let battery = sensor["battery"]?.number { parts.append("battery \(WorkoutText.whole(battery))%") }
            if let location = sensor["location"]?.string { parts.append(location) }
            if let contact = sensor["contact"]?.string { parts.append("contact \(contact)") }
            // What the sensor sent that was not used, when it sent any.
            let rejected = [
                ("malformed", "malformed"), ("outOfRange", "out of range"), ("excessBeats", "excess beats"),
                ("throttled", "throttled"),
            ].compactMap { key, label in
                sensor[key]?.number.flatMap { $0 > 0 ? "\(WorkoutText.whole($0)) \(label)" : nil }
            }
            if !rejected.isEmpty { parts.append("rejected: " + rejected.joined(separator: ", ")) }
            switch (sensor["notify"]?.string, sensor["notifyFallback"]?.string) {
            case ("acquire", _): parts.append("notifications over AcquireNotify")
            case (_, let reason?): parts.append("notifications over signals (\(WorkoutText.printable(reason)))")
            case ("signal", nil): parts.append("notifications over signals")
            default: break
            }
            if let ecg = sensor["ecg"]?.string { parts.append("ECG \(WorkoutText.printable(ecg))") }
            print("Sensor: " + parts.joined(separator: " · "))
        }
    }
}

/// `systole pair ADDRESS` / `systole forget ADDRESS`.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with and trust a sensor (find its address with 'systole scan')."
    )
    @Argument(help: "The sensor's address, like A0:9E:1A:12:34:56.") var address: String
    @OptionGroup var daemon: ControlOptions

    func run() async throws {
        _ = try await daemon.connect().call("Pair", [.string(address)], timeout: .seconds(70))
        print("Paired with \(address)")
    }
}

struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Remove a sensor's pairing from bluetoothd."
    )
    @Argument(help: "The sensor's address.") var address: String
    @OptionGroup var daemon: ControlOptions

    func run() async throws {
        _ = try await daemon.connect().call("Forget", [.string(address)])
        print("Forgot \(address)")
    }
}

/// `systole workouts` and `systole workouts show ID`.
struct WorkoutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workouts",
        abstract: "List, show and delete finished workouts.",
        subcommands: [ListWorkouts.self, ShowWorkout.self, DeleteWorkout.self],
        defaultSubcommand: ListWorkouts.self
    )

    struct ListWorkouts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List finished workouts.")
        @OptionGroup var daemon: ControlOptions
        @OptionGroup var central: CentralOptions
        @Option(help: "Only this athlete's workouts (a name from the [athletes] table).") var athlete: String?
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let workouts: [DBusValue]
            if let address = try central.address() {
                let athlete = athlete
                let listing = try await central.with(address) { database in
                    try await database.workouts(athlete: athlete)
                }
                CentralWorkouts.report(listing.unreadable)
                workouts = listing.entries.map { .propertyMap(CentralWorkouts.values($0)) }
            } else {
                workouts = (try await daemon.connect().call("ListWorkouts").first?.array ?? []).filter { workout in
                    athlete == nil || workout.map["athlete"]?.string == athlete
                }
            }
            if json {
                printJSON(workouts.map(\.jsonObject))
                return
            }
            if workouts.isEmpty { print("No workouts yet") }
            for workout in workouts.map(\.map) {
                let receiver = workout["receiver"]?.string.map { "  (\(WorkoutText.printable($0)))" } ?? ""
                print("\(WorkoutText.date(workout["start"]))  " + WorkoutText.summary(workout) + receiver)
            }
        }
    }

    struct ShowWorkout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract:
                "Show a workout's statistics, laps, markers, HRV, time in zones, TRIMP, energy and heart-rate chart."
        )
        @Argument(help: "The workout's id (its first characters are enough).") var id: String
        @OptionGroup var daemon: ControlOptions
        @OptionGroup var central: CentralOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let workout: DBusValue
            if let address = try central.address() {
                let id = id
                workout = .propertyMap(
                    try await central.with(address) { database in
                        try await CentralWorkouts.details(try await CentralWorkouts.one(id, in: database), in: database)
                    }
                )
            } else {
                workout = try await daemon.connect().call("GetWorkout", [.string(id)]).first ?? .propertyMap([:])
            }
            if json {
                printJSON(workout.jsonObject)
                return
            }
            let values = workout.map
            print(WorkoutText.summary(values))
            print("Started \(WorkoutText.date(values["start"])), ended \(WorkoutText.date(values["end"]))")
            if let receiver = values["receiver"]?.string {
                print("Recorded by \(WorkoutText.printable(receiver)); zones and energy from the default profile")
            }
            let statistics = values["statistics"]?.map ?? [:]
            if let heartRate = statistics["heartRate"]?.map {
                let numbers = ["minimum", "average", "maximum"].compactMap { key in
                    heartRate[key]?.number.map { "\(key) \(WorkoutText.whole($0))" }
                }
                print("Heart rate (bpm): " + numbers.joined(separator: ", "))
            }
            if let pauses = values["pauses"]?.number, pauses > 0 { print("Pauses: \(WorkoutText.whole(pauses))") }
            for line in AnalysisText.lines(values) { print(line) }
            print("Heart rate per minute:")
            let perMinute = (values["heartRatePerMinute"]?.array ?? []).map { $0.double ?? .nan }
            for line in WorkoutText.chart(perMinute) { print(line) }
        }
    }
}

extension WorkoutsCommand {
    /// `systole workouts delete ID`: asks first unless `--yes`.
    struct DeleteWorkout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete a workout and its samples (asks first unless --yes).",
            discussion: "The deletion is recorded, so programs that follow changes (anchored queries) see it."
        )
        @Argument(help: "The workout's id (its first characters are enough).") var id: String
        @Flag(help: "Do not ask.") var yes = false
        @OptionGroup var daemon: ControlOptions

        func run() async throws {
            let client = try await daemon.connect()
            let workout = try await client.call("GetWorkout", [.string(id)]).first?.map ?? [:]
            let fullID = workout["id"]?.string ?? id
            if !yes {
                print(
                    "Delete \(WorkoutText.date(workout["start"]))  \(WorkoutText.summary(workout)) and its samples? [y/N] ",
                    terminator: ""
                )
                // Standard output is line-buffered: the question has no line end yet.
                fflush(nil)  // every output stream: `stdout` itself is not concurrency-safe to name
                let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
                guard answer == "y" || answer == "yes" else {
                    print(
                        answer == nil ? "\nNot deleted (no answer; use --yes to delete without asking)" : "Not deleted"
                    )
                    throw ExitCode.failure
                }
            }
            _ = try await client.call("DeleteWorkout", [.string(fullID)])
            print("Deleted workout \(fullID.prefix(8))")
        }
    }
}

/// `systole stats --type heart-rate --interval 1h`.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Statistics of a sample type in buckets of minutes, hours, days or weeks."
    )

    static let types = ["heart-rate": "heartRate", "energy": "activeEnergyBurned", "water": "dietaryWater"]

    @Option(help: "heart-rate, energy or water.") var type = "heart-rate"
    @Option(help: "Bucket size: a number and m, h, d or w (1m, 15m, 1h, 1d, 1w).") var interval = "1h"
    @Option(help: "Start, as ISO 8601 (2026-11-22 or 2026-11-22T08:00:00Z); default 24 hours ago.") var from: String?
    @Option(help: "End, as ISO 8601; default now.") var to: String?
    @Option(help: "With --database: only this athlete's workouts.") var athlete: String?
    @OptionGroup var daemon: ControlOptions
    @OptionGroup var central: CentralOptions
    @Flag(help: "Print JSON.") var json = false

    /// The interval in seconds (validated first).
    var intervalSeconds: Double {
        let unit: Double =
            ["m": 60, "h": 3600, "d": 86_400, "w": 604_800][interval.last.map(String.init) ?? "h"] ?? 3600
        return Double(Int(interval.dropLast()) ?? 1) * unit
    }

    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle().year().month().day())
    }

    func validate() throws {
        guard Self.types[type] != nil else { throw ValidationError("--type takes heart-rate, energy or water") }
        if athlete != nil, central.database == nil {
            throw ValidationError("--athlete goes with --database (systoled's statistics cover all its sensors)")
        }
        guard let unit = interval.last, "mhdw".contains(unit), let count = Int(interval.dropLast()), count > 0 else {
            throw ValidationError("--interval takes a number and m, h, d or w, like 1m, 1h or 1d")
        }
        // As systoled's own limit: a bucket of at most a year (counted in a Double, so no number traps).
        guard intervalSeconds <= 366 * 86_400 else {
            throw ValidationError("--interval is at most a year: 366d or 52w")
        }
        for (name, value) in [("--from", from), ("--to", to)] {
            if let value, Self.date(value) == nil {
                throw ValidationError("\(name) takes an ISO 8601 date like 2026-11-22 or 2026-11-22T08:00:00Z")
            }
        }
    }

    func run() async throws {
        let end = to.flatMap(Self.date) ?? Date()
        let start = from.flatMap(Self.date) ?? end.addingTimeInterval(-86_400)
        guard start < end else { throw CommandFailure.usage("--from must be before --to") }
        if let address = try central.address() {
            guard end.timeIntervalSince(start) / intervalSeconds <= 20_160 else {
                throw CommandFailure.usage(
                    "that is more than 20160 buckets; take a longer --interval or a shorter range"
                )
            }
            let (type, interval, athlete) = (
                QuantityType(identifier: Self.types[type] ?? "") ?? .heartRate, intervalSeconds, athlete
            )
            let found = try await central.with(address) { database in
                try await database.statistics(of: type, from: start, to: end, interval: interval, athlete: athlete)
            }
            printBuckets(found.map { DBusValue.propertyMap(CentralWorkouts.values($0)) })
            return
        }
        printBuckets(
            try await daemon.connect().call(
                "Statistics",
                [
                    .string(Self.types[type] ?? type), .string(interval), .double(start.timeIntervalSince1970),
                    .double(end.timeIntervalSince1970),
                ]
            ).first?.array ?? []
        )
    }

    private func printBuckets(_ buckets: [DBusValue]) {
        if json {
            printJSON(buckets.map(\.jsonObject))
            return
        }
        if buckets.isEmpty { print("No \(type) samples in that range") }
        for bucket in buckets.map(\.map) {
            var parts = [WorkoutText.date(bucket["start"])]
            if let sum = bucket["sum"]?.number {
                parts.append("sum \(sum.formatted(.number.precision(.fractionLength(0...1))))")
            } else {
                for key in ["average", "minimum", "maximum"] {
                    if let value = bucket[key]?.number {
                        parts.append("\(key == "average" ? "avg" : String(key.prefix(3))) \(WorkoutText.whole(value))")
                    }
                }
            }
            if let count = bucket["count"]?.number { parts.append("\(WorkoutText.whole(count)) readings") }
            print(parts.joined(separator: "  "))
        }
    }
}
