import Foundation
import SystoleTestSupport
import Testing

/// `systole trends` with the real systoled: 90 days of workouts imported from FIT files fit-tool wrote, and the
/// training load, fitness, fatigue and form systoled reports per day equal (within 0.1) to what pmc_reference.py
/// computes from the published definitions, and each day's resting heart rate (within 0.01) to its computation.
@Suite struct TrendsEndToEndTests {
    static let profile = """
        [profile]
        age = 40
        sex = "male"
        resting_hr = 50
        max_hr = 190
        goal_energy_kcal = 600
        goal_zone_minutes = 40
        """

    /// One workout on most of 90 days from 2026-06-01, at 10:00 UTC (the same calendar day from UTC−10 to UTC+12),
    /// 20 to 90 minutes, a heart-rate record every 4 s that rises and falls; a seeded choice of days and efforts.
    static func workouts() -> [ActivityFiles.FITSpec] {
        var random = SplitMix64(seed: 90)
        let first = 1_780_308_000.0  // 2026-06-01T10:00:00Z
        return (0..<90).compactMap { day -> ActivityFiles.FITSpec? in
            guard random.next() % 6 != 0 else { return nil }
            let start = first + Double(day) * 86_400
            let minutes = 20 + Double(random.next() % 71)
            let base = 110 + Double(random.next() % 40)
            var spec = ActivityFiles.FITSpec(path: ActivityFiles.path("fit"), start: start, end: start + minutes * 60)
            spec.records = stride(from: start, to: spec.end, by: 4).map { when in
                let phase = (when - start) / (minutes * 60)
                return [when, (base + 40 * sin(phase * .pi)).rounded()]
            }
            spec.calories = Int(minutes) * 8
            return spec
        }
    }

    @Test func ninetyDaysOfImportedWorkoutsGiveTheLoadFitnessFatigueAndFormOfThePublishedDefinition() async throws {
        var options = DaemonHarness.Options()
        options.name = "systole-trends"
        options.configuration = Self.profile
        let s = try await DaemonHarness.start(options)
        defer { s.stop() }
        let specs = Self.workouts()
        let files = try await ActivityFiles.writtenFIT(specs).enumerated().map { index, bytes in
            let url = s.folder.appendingPathComponent("day-\(index).fit")
            try Data(bytes).write(to: url)
            return url.path
        }
        let imported = try await s.systole(["import"] + files)
        try #require(imported.status == 0, "\(imported.standardError)")

        for (from, to) in [("2026-06-01", "2026-08-29"), ("2026-07-10", "2026-09-05")] {
            let reply = try await s.systole(["trends", "--from", from, "--to", to, "--json"])
            try #require(reply.status == 0, "\(reply.standardError)")
            let days = try #require(
                try JSONSerialization.jsonObject(with: Data(reply.standardOutput.utf8)) as? [[String: Any]]
            )
            let reference = try await Self.reference(specs, from: from, to: to, folder: s.folder)
            #expect(days.count == reference.count)
            #expect(days.map { $0["day"] as? String } == reference.map { $0["day"] as? String })
            for (ours, theirs) in zip(days, reference) {
                for (key, theirKey) in [
                    ("load", "load"), ("fitness", "fitness"), ("fatigue", "fatigue"), ("form", "form"),
                    ("energy", "energy"), ("zoneMinutes", "zone_minutes"),
                ] {
                    let a = ours[key] as? Double ?? .nan
                    let b = theirs[theirKey] as? Double ?? .nan
                    #expect(abs(a - b) <= 0.1, "\(ours["day"] ?? "?") \(key): systole \(a), reference \(b)")
                }
                // The day's resting heart rate, where it has a workout five minutes long.
                let resting = (ours["restingHeartRate"] as? Double, theirs["resting"] as? Double)
                #expect(
                    resting.0 == nil && resting.1 == nil || abs((resting.0 ?? .nan) - (resting.1 ?? .nan)) < 0.01,
                    "\(ours["day"] ?? "?") resting: systole \(String(describing: resting.0)), reference \(String(describing: resting.1))"
                )
            }
            #expect(days.contains { $0["restingHeartRate"] is Double })
            // The days after the last workout: fitness and fatigue decay, form climbs back.
            #expect((days.last?["fitness"] as? Double ?? 0) > 0)
        }
        let chart = try await s.systole(["trends", "--from", "2026-06-01", "--to", "2026-08-29"])
        #expect(chart.status == 0, "\(chart.standardError)")
        #expect(
            chart.standardOutput.hasPrefix("Training load 2026-06-01 to 2026-08-29 (90 days; \(specs.count) workouts)")
        )
        // The last day against the goals of [profile].
        #expect(chart.standardOutput.contains("2026-08-29 against your goals: workouts 1 of 1 ✓ · zone 2+ "))
        #expect(chart.standardOutput.contains(" of 40 min") && chart.standardOutput.contains(" of 600 kcal"))
        let csv = try await s.systole(["trends", "--days", "7", "--to", "2026-08-29", "--csv"])
        let rows = csv.standardOutput.split(separator: "\n")
        #expect(rows.first == "day,load,fitness,fatigue,form,workouts,resting_hr,energy_kj,zone_minutes")
        #expect(rows.count == 8 && rows.last?.hasPrefix("2026-08-29,") == true, "\(csv.standardOutput)")
    }

    static func reference(
        _ specs: [ActivityFiles.FITSpec],
        from: String,
        to: String,
        folder: URL
    ) async throws -> [[String: Any]] {
        struct Activity: Encodable {
            var start: Double
            var end: Double
            var calories: Int
            var records: [[Double]]
        }
        struct Spec: Encodable {
            var resting = 50.0
            var max = 190.0
            var activities: [Activity]
            var from: String
            var to: String
        }
        let path = folder.appendingPathComponent("reference-\(from).json")
        try JSONEncoder().encode(
            Spec(
                activities: specs.map {
                    Activity(start: $0.start, end: $0.end, calories: $0.calories ?? 0, records: $0.records)
                },
                from: from,
                to: to
            )
        ).write(to: path)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("pmc_reference.py").path
        let output = try await PythonTools.run(script, [path.path])
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]])
    }
}
