import ControlAPI
import DBus
import Foundation
import SQLiteStore
import SystoleTestSupport
import Testing
import WorkoutAnalysis
import WorkoutImport
import WorkoutKit

@testable import Daemon

/// systoled's `ImportWorkouts` with a real store: what `systole import` sends becomes a workout that reads back as
/// it was sent (the recording exports and analyses read), once only; values a caller made up are refused, and the
/// store is left as it was.
@Suite struct ImportControlTests {
    final class Setup: Sendable {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("import-control-\(UUID())")
        let store: SQLiteHealthStore
        let method: DBusMethod

        init() throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            store = try SQLiteHealthStore(path: folder.appendingPathComponent("h.sqlite").path)
            var methods: [DBusMethod] = []
            ImportControl(store: store, clock: SystemWorkoutClock()).addMethods(to: &methods)
            method = try #require(methods.first { $0.name == "ImportWorkouts" })
        }

        func call(_ arguments: [DBusValue]) async throws(DBusError) -> [(id: String, saved: Bool)] {
            let call = DBusMethodCall(
                sender: ":1.7",
                path: ControlAPI.objectPath,
                interface: ControlAPI.interface,
                member: "ImportWorkouts",
                arguments: arguments
            )
            let reply = try await method.handler(call)
            return (reply.first?.array ?? []).compactMap { outcome in
                guard let fields = outcome.fields, let id = fields[0].string, let saved = fields[1].bool else {
                    return nil
                }
                return (id, saved)
            }
        }

        deinit { try? FileManager.default.removeItem(at: folder) }
    }

    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    /// 20 minutes of a run: a reading a second (none in the pause), a pause, two laps, 1 500 RR intervals, energy.
    static func run() -> ImportedActivity {
        let pause = DateInterval(start: start + 300, end: start + 360)
        return ImportedActivity(
            format: .fit,
            activity: .running,
            start: start,
            end: start + 1200,
            pauses: [pause],
            laps: [DateInterval(start: start, end: start + 600), DateInterval(start: start + 600, end: start + 1200)],
            heartRates: (1..<1200).filter { !(300..<360).contains($0) }.map {
                .init(date: start + Double($0), beatsPerMinute: Double(100 + $0 % 50))
            },
            rrIntervals: (0..<1500).map { 0.55 + Double($0 % 9) / 1000 },
            energyKilocalories: 250,
            recorder: .init(manufacturer: "Garmin", product: "Forerunner 965", serialNumber: "3456789")
        )
    }

    @Test func anActivityIsSavedAsSentAndOnlyOnce() async throws {
        let s = try Setup()
        let activity = Self.run()
        let first = try await s.call([ImportValues.value(of: [activity])])
        let id = try #require(first.first?.id)
        #expect(first.map(\.saved) == [true])

        let workout = try #require(try await s.store.workouts().first)
        #expect(workout.id.uuidString == id)
        #expect(workout.activityType == .running)
        #expect(workout.startDate == activity.start && workout.endDate == activity.end)
        #expect(workout.duration == 1140)
        #expect(workout.metadata[ImportedActivity.formatKey] == .string("FIT"))
        #expect(workout.devices == [Device(name: "Forerunner 965", manufacturer: "Garmin")])
        let recording = try await ActivityRecording.read(workout, from: s.store)
        #expect(recording.readings.map(\.date) == activity.heartRates.map(\.date))
        #expect(recording.readings.map(\.bpm) == activity.heartRates.map(\.beatsPerMinute))
        #expect(
            recording.beats.map { (Double($0.rrTicks) / 1.024).rounded() }
                == activity.rrIntervals.map { ($0 * 1000).rounded() }
        )
        #expect(recording.pauses == activity.pauses)
        #expect(recording.laps == activity.laps)
        #expect(abs((recording.energy?.kilojoules ?? 0) - 250 * 4.184) < 1e-9)
        // The statistics leave out the pause, as a recording's do (here no reading falls in it anyway).
        let heartRate = try #require(workout.statistics(for: .heartRate))
        #expect(heartRate.readingCount == activity.heartRates.count)
        #expect(heartRate.maximumQuantity()?.value == 149)

        // The same file again: nothing new, the stored workout's id.
        let again = try await s.call([ImportValues.value(of: [activity])])
        #expect(again.map(\.saved) == [false] && again.first?.id == id)
        #expect(try await s.store.workouts().count == 1)
        // Another device's activity at the same start is another workout.
        var other = activity
        other.recorder.serialNumber = "42"
        #expect(try await s.call([ImportValues.value(of: [other])]).map(\.saved) == [true])
        #expect(try await s.store.workouts().count == 2)
    }

    /// What a caller in group systole could send instead of what `systole import` reads: each refused, nothing
    /// stored.
    @Test func madeUpValuesAreRefusedAndNothingIsStored() async throws {
        let s = try Setup()
        let good = Self.run()
        func with(_ change: (inout ImportedActivity) -> Void) -> DBusValue {
            var activity = good
            change(&activity)
            return ImportValues.value(of: [activity])
        }
        func replacing(_ key: String, with value: DBusValue?) -> DBusValue {
            guard case .array(let type, let activities) = ImportValues.value(of: [good]),
                var fields = activities.first?.fields, var map = fields[0].propertyMap
            else { return .array(.double, []) }
            map[key] = value
            fields[0] = .propertyMap(map)
            return .array(type, [.structure(fields)])
        }
        func arrays(times: [DBusValue], rates: [DBusValue], rr: [DBusValue] = []) -> DBusValue {
            guard case .array(let type, let activities) = ImportValues.value(of: [good]),
                var fields = activities.first?.fields
            else { return .array(.double, []) }
            fields[1] = .array(.uint32, times)
            fields[2] = .array(.double, rates)
            fields[3] = .array(.uint32, rr)
            return .array(type, [.structure(fields)])
        }
        let future = Date().addingTimeInterval(3 * 86_400)
        let hostile: [(String, [DBusValue], String)] = [
            ("no argument", [], "expects one argument"),
            ("activities of another type", [.array(.double, [.double(1)])], "expected activities"),
            ("no activity", [.array(ImportValues.activityType, [])], "holds no activity"),
            ("a heart rate of 300", [with { $0.heartRates[5].beatsPerMinute = 300 }], "heart-rate reading 6"),
            ("a heart rate NaN", [with { $0.heartRates[0].beatsPerMinute = .nan }], "heart-rate reading 1"),
            ("readings out of order", [with { $0.heartRates.swapAt(3, 4) }], "out of order"),
            ("a reading after the end", [with { $0.heartRates[9].date = good.end + 3600 }], "out of order"),
            ("an RR of 0", [with { $0.rrIntervals[7] = 0 }], "RR interval 8"),
            ("a lap outside", [with { $0.laps.append(DateInterval(start: good.end, duration: 60)) }], "lap 3"),
            (
                "a pause before the start", [with { $0.pauses = [DateInterval(start: good.start - 60, duration: 1)] }],
                "pause 1"
            ),
            (
                "a start in the future",
                [
                    with {
                        $0.start = future
                        $0.end = future + 60
                    }
                ], "in the future"
            ),
            (
                "pauses that overlap",
                [
                    with {
                        $0.pauses = [
                            DateInterval(start: good.start + 100, duration: 60),
                            DateInterval(start: good.start + 120, duration: 60),
                        ]
                    }
                ],
                "pause 2 starts before pause 1 ends"
            ),
            ("an end before the start", [with { $0.end = good.start - 1 }], "ends before it starts"),
            ("eight days", [with { $0.end = good.start + 8 * 86_400 }], "at most a week"),
            ("an energy of a million kcal", [with { $0.energyKilocalories = 1e6 }], "energy"),
            ("an escape in a name", [with { $0.recorder.product = "\u{1B}[2J" }], "not cleaned text"),
            ("an unknown format", [replacing("format", with: .string("GPX"))], "unknown format"),
            ("an unknown activity", [replacing("activity", with: .string("flying"))], "unknown activity"),
            ("no start", [replacing("start", with: nil)], "no start"),
            ("a start of NaN", [replacing("start", with: .double(.nan))], "not a finite number"),
            ("a start as text", [replacing("start", with: .string("now"))], "not a finite number"),
            ("a name as a number", [replacing("product", with: .double(1))], "not a string"),
            (
                "a pause that ends before it starts",
                [
                    replacing(
                        "pauses",
                        with: .array(.structure([.double, .double]), [.structure([.double(2e9), .double(1)])])
                    )
                ],
                "ends before it starts"
            ),
            ("laps of another type", [replacing("laps", with: .array(.double, []))], "not an array"),
            (
                "more times than rates", [arrays(times: [.uint32(1), .uint32(2)], rates: [.double(90)])],
                "2 heart-rate times"
            ),
            ("a time past any activity", [arrays(times: [.uint32(.max)], rates: [.double(90)])], "out of order"),
            (
                "too many readings",
                [
                    arrays(
                        times: [],
                        rates: [],
                        rr: Array(repeating: .uint32(600_000), count: ImportLimits.readings + 1)
                    )
                ],
                "more than \(ImportLimits.readings)"
            ),
            (
                "too many activities",
                [
                    .array(
                        ImportValues.activityType,
                        Array(
                            repeating: .structure([
                                .propertyMap([:]), .array(.uint32, []), .array(.double, []), .array(.uint32, []),
                            ]),
                            count: ImportLimits.laps + 1
                        )
                    )
                ],
                "more than \(ImportLimits.laps) activities"
            ),
        ]
        for (what, arguments, says) in hostile {
            do {
                _ = try await s.call(arguments)
                Issue.record("\(what): imported")
            } catch {
                #expect(error.name == ControlAPI.ErrorName.invalidArguments, "\(what): \(error)")
                #expect(error.message.contains(says), "\(what): \(error.message)")
            }
        }
        #expect(try await s.store.workouts().isEmpty)
        let stored = try await s.store.statistics(of: .heartRate, from: .distantPast, to: .distantFuture)
        #expect((stored?.readingCount ?? 0) == 0)
        // And the good one still goes in.
        #expect(try await s.call([ImportValues.value(of: [good])]).map(\.saved) == [true])
    }
}
