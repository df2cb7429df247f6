import ArgumentParser
import ControlAPI
import DBus
import Foundation
import Replication
import WorkoutAnalysis
import WorkoutKit

/// `--database URL`: read the central PostgreSQL database (every receiver, every athlete) instead of systoled.
struct CentralOptions: ParsableArguments {
    @Option(
        name: .customLong("database"),
        help: ArgumentHelp(
            "Read the central PostgreSQL database that receivers replicate into, instead of systoled: "
                + "postgresql://USER@HOST/DB (the password in $PGPASSWORD: in the address every local user sees it in "
                + "'ps'; ?sslmode=disable, require or verify-full, by default disable on loopback and verify-full elsewhere).",
            valueName: "url"
        )
    )
    var database: String?

    /// The parsed address, or nil without `--database`.
    func address() throws -> PostgresAddress? {
        guard let database else { return nil }
        let address: PostgresAddress
        do {
            address = try PostgresAddress(parsing: database)
        } catch {
            throw CommandFailure.usage("--database: \(error.description)")
        }
        if address.password != nil {
            printError(
                "systole: warning: the password in --database is visible to every user of this machine (ps); "
                    + "put it in $PGPASSWORD instead"
            )
        }
        return address
    }

    /// Runs `body` against the central database, with errors that say what to do.
    func with<T: Sendable>(
        _ address: PostgresAddress,
        _ body: @escaping @Sendable (CentralDatabase) async throws -> T
    ) async throws -> T {
        do {
            return try await CentralDatabase.with(
                address,
                password: ProcessInfo.processInfo.environment["PGPASSWORD"],
                body: body
            )
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.invalidInput(
                "cannot read the central database at \(address.host):\(address.port): \(Replicator.describe(error)). "
                    + "Check the address, the password ($PGPASSWORD) and sslmode"
            )
        }
    }
}

/// A workout of the central database as the commands print it: the control API's values, with the receiver.
enum CentralWorkouts {
    /// Says on standard error which workout rows could not be read (the first few), so a list is not taken for
    /// complete.
    static func report(_ unreadable: [CentralDatabase.Unreadable]) {
        guard !unreadable.isEmpty else { return }
        printError("\(unreadable.count) workout(s) in the central database cannot be read:")
        for bad in unreadable.prefix(5) {
            printError(
                "  \(WorkoutText.printable(bad.id)) from receiver \(WorkoutText.printable(bad.receiver)): \(bad.reason)"
            )
        }
        if unreadable.count > 5 { printError("  and \(unreadable.count - 5) more") }
    }

    static func values(_ entry: CentralDatabase.Entry) -> [String: DBusValue] {
        var values = WorkoutValues.values(of: entry.workout)
        values["receiver"] = .string(entry.receiver)
        return values
    }

    /// The one workout whose id starts with `prefix`, or a failure that says what to do.
    static func one(_ prefix: String, in database: CentralDatabase) async throws -> CentralDatabase.Entry {
        let listing = try await database.workouts(idPrefix: prefix)
        let matching = listing.entries
        if matching.isEmpty, let bad = listing.unreadable.first {
            throw CommandFailure.invalidInput(
                "workout \(WorkoutText.printable(bad.id)) in the central database (from receiver "
                    + "\(WorkoutText.printable(bad.receiver))) cannot be read: \(bad.reason)"
            )
        }
        guard let first = matching.first else {
            throw CommandFailure.invalidInput(
                "no workout '\(WorkoutText.printable(prefix))' in the central database; list them with "
                    + "'systole workouts --database URL'"
            )
        }
        guard matching.count == 1 else {
            throw CommandFailure.invalidInput(
                "\(matching.count) workouts start with '\(WorkoutText.printable(prefix))'; give more of the id"
            )
        }
        return first
    }

    /// What `workouts show` prints, from the central database: the workout, its analysis with the default
    /// profile (systoled's `[profile]` is on the receivers), and its heart rate per minute.
    static func details(
        _ entry: CentralDatabase.Entry,
        in database: CentralDatabase
    ) async throws -> [String: DBusValue] {
        let recording = ActivityRecording(
            workout: entry.workout,
            samples: try await database.samples(ofWorkout: entry.workout.id)
        )
        var values = values(entry)
        values.merge(AnalysisValues.values(of: recording, profile: AthleteProfile())) { $1 }
        values["heartRatePerMinute"] = .array(.double, perMinute(recording).map { .double($0 ?? .nan) })
        return values
    }

    /// The average heart rate of each minute since the start (nil without readings), at most a week of minutes.
    /// The central database is written by every receiver: a date that is infinite or far off must not trap here.
    static func perMinute(_ recording: ActivityRecording) -> [Double?] {
        let length = (recording.end.timeIntervalSince(recording.start) / 60).rounded(.up)
        let minutes = length.isFinite ? Int(max(0, min(length, 7 * 24 * 60))) : 0
        var sums = [Double](repeating: 0, count: minutes)
        var counts = [Int](repeating: 0, count: minutes)
        for reading in recording.readings {
            let offset = reading.date.timeIntervalSince(recording.start) / 60
            guard offset >= 0, offset < Double(minutes) else { continue }
            let index = Int(offset)
            sums[index] += reading.bpm
            counts[index] += 1
        }
        return zip(sums, counts).map { $1 > 0 ? $0 / Double($1) : nil }
    }

    /// A statistics bucket as `Statistics` returns it.
    static func values(_ bucket: CentralDatabase.Bucket) -> [String: DBusValue] {
        var values: [String: DBusValue] = [
            "start": .double(bucket.start.timeIntervalSince1970),
            "end": .double(bucket.end.timeIntervalSince1970),
            "count": .int64(Int64(bucket.count)),
        ]
        values["average"] = bucket.average.map(DBusValue.double)
        values["minimum"] = bucket.minimum.map(DBusValue.double)
        values["maximum"] = bucket.maximum.map(DBusValue.double)
        values["sum"] = bucket.sum.map(DBusValue.double)
        return values
    }
}
