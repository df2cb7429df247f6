import Foundation
import SystoleTestSupport
import Testing

/// `systole import` with the real systoled: a FIT file fit-tool wrote and a TCX file valid against Garmin's schema
/// read back through `systole export` (decoded by Garmin's own FIT decoder and checked against the schema) equal to
/// what was imported; the same file again is skipped; hostile files are refused with what is wrong and the store is
/// left exactly as it was.
@Suite struct ImportEndToEndTests {
    static let fitEpoch = 631_065_600.0

    func start() async throws -> DaemonHarness {
        var options = DaemonHarness.Options()
        options.name = "systole-import"
        // The private bus keeps dbus-daemon's default limits (32 MiB a message), as the system bus does.
        return try await DaemonHarness.start(options)
    }

    @Test func aFITFileFromAnotherEncoderComesBackOutOfExportAsItWent() async throws {
        let s = try await start()
        defer { s.stop() }
        let spec = ActivityFiles.fitRun()
        let file = s.folder.appendingPathComponent("run.fit")
        try Data(try #require(try await ActivityFiles.writtenFIT([spec]).first)).write(to: file)

        let imported = try await s.systole(["import", file.path])
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(imported.standardOutput.hasPrefix("imported: "), "\(imported.standardOutput)")
        #expect(imported.standardOutput.contains("running · 00:28:20"), "\(imported.standardOutput)")
        let again = try await s.systole(["import", file.path])
        #expect(again.status == 0, "\(again.standardError)")
        #expect(again.standardOutput.hasPrefix("already imported: "), "\(again.standardOutput)")
        let list = try await s.workoutList()
        try #require(list.count == 1, "\(list)")
        let id = try #require(list.first?["id"] as? String)
        #expect(list.first?["devices"] as? [String] == ["Polar Vantage V3"])
        #expect(list.first?["imported"] as? String == "FIT")

        let out = s.folder.appendingPathComponent("out.fit").path
        let exported = try await s.systole(["export", id, "--format", "fit", "-o", out])
        try #require(exported.status == 0, "\(exported.standardError)")
        let decoded = try await Self.decodedFIT(out)
        #expect(decoded["garmin_integrity"] as? Bool == true)
        #expect((decoded["garmin_errors"] as? [Any])?.isEmpty == true)
        #expect(decoded["garmin_heart_rates"] as? [Int] == spec.records.map { Int($0[1]) })
        #expect(decoded["garmin_record_times"] as? [Double] == spec.records.map { $0[0] - Self.fitEpoch })
        let hrv = (decoded["garmin_hrv"] as? [[Double]] ?? []).flatMap { $0 }
        #expect(hrv.count == spec.rr.count)
        #expect(zip(hrv, spec.rr).allSatisfy { abs($0 - $1) < 0.0005 }, "\(hrv.prefix(5))")
        let laps = decoded["garmin_lap_times"] as? [[Double]] ?? []
        #expect(laps.map { $0[0] } == spec.laps.map { $0[0] - Self.fitEpoch }, "\(laps)")
        #expect(laps.map { $0[1] } == spec.laps.map { $0[1] - $0[0] }, "\(laps)")
        let events = (decoded["garmin_events"] as? [[String]] ?? []).map { $0.joined(separator: " ") }
        #expect(events == ["timer start", "timer stop_all", "timer start", "timer stop_all"], "\(events)")
        let times = [spec.start, spec.pauses[0][0], spec.pauses[0][1], spec.end].map { $0 - Self.fitEpoch }
        #expect(decoded["garmin_event_times"] as? [Double] == times)
        let session = decoded["garmin_session"] as? [String: Any] ?? [:]
        #expect(session["sport"] as? String == "running")
        #expect(session["total_calories"] as? Int == spec.calories)
        #expect(session["total_elapsed_time"] as? Double == spec.end - spec.start)
        #expect(session["total_timer_time"] as? Double == spec.end - spec.start - 100)
    }

    @Test func aTCXFileValidAgainstGarminsSchemaComesBackOutOfExportAsItWent() async throws {
        let s = try await start()
        defer { s.stop() }
        let file = s.folder.appendingPathComponent("ride.tcx")
        let start = Date(timeIntervalSince1970: 1_790_100_000)
        try ActivityFiles.tcxDocument(start: start, laps: 3, points: 40, sport: "Biking")
            .write(to: file, atomically: true, encoding: .utf8)
        let source = try await Self.checkedTCX(file.path)
        #expect((source["errors"] as? [Any])?.isEmpty == true, "\(source["errors"] ?? "")")

        let imported = try await s.systole(["import", file.path])
        #expect(imported.status == 0, "\(imported.standardError)")
        let id = try #require(try await s.workoutList().first?["id"] as? String)
        let out = s.folder.appendingPathComponent("out.tcx").path
        let exported = try await s.systole(["export", id, "--format", "tcx", "-o", out])
        try #require(exported.status == 0, "\(exported.standardError)")
        let back = try await Self.checkedTCX(out)
        #expect((back["errors"] as? [Any])?.isEmpty == true, "\(back["errors"] ?? "")")
        #expect(back["sport"] as? String == "Biking")
        #expect(back["id"] as? Double == start.timeIntervalSince1970)
        func laps(_ report: [String: Any]) -> [[String: Any]] { report["laps"] as? [[String: Any]] ?? [] }
        func points(_ report: [String: Any]) -> [[Double]] {
            laps(report).flatMap { ($0["tracks"] as? [[[Double]]] ?? []).flatMap { $0 } }
        }
        #expect(points(back) == points(source), "\(points(back).prefix(3)) vs \(points(source).prefix(3))")
        #expect(laps(back).map { $0["start"] as? Double } == laps(source).map { $0["start"] as? Double })
        let calories = { (report: [String: Any]) in laps(report).compactMap { $0["calories"] as? Int }.reduce(0, +) }
        #expect(calories(back) == calories(source), "\(calories(back)) kcal exported")
    }

    @Test func hostileFilesAreRefusedWithWhatIsWrongAndTheStoreIsLeftAsItWas() async throws {
        let s = try await start()
        defer { s.stop() }
        var good = ActivityFiles.fitRun()
        good.records = good.records.prefix(200).map { $0 }
        var tooFast = ActivityFiles.fitRun(start: 1_790_200_000)
        tooFast.records[10][1] = 251
        let written = try await ActivityFiles.writtenFIT([good, tooFast])
        let folder = s.folder
        func file(_ name: String, _ bytes: [UInt8]) throws -> String {
            let url = folder.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            return url.path
        }
        let goodFile = try file("good.fit", written[0])
        #expect(try await s.systole(["import", goodFile]).status == 0)
        let before = try await s.storeCounts()

        let laughs = """
            <?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
            <TrainingCenterDatabase><Activities/></TrainingCenterDatabase>
            """
        var wrongCRC = written[0]
        wrongCRC[wrongCRC.count / 2] ^= 0x55
        let hostile: [(String, String)] = [
            (try file("truncated.fit", Array(written[0].prefix(written[0].count / 2))), "not a readable FIT file"),
            (try file("crc.fit", wrongCRC), "not a readable FIT file"),
            (try file("251.fit", written[1]), "a heart rate of 251 bpm"),
            (try file("laughs.tcx", Array(laughs.utf8)), "document type"),
            (try file("strava.fit.gz", [0x1F, 0x8B, 8, 0, 0, 0]), "gunzip"),
            (try file("notes.txt", Array("just text".utf8)), "neither a FIT nor a TCX file"),
            (folder.appendingPathComponent("missing.fit").path, "cannot open it"),
            (folder.path, "cannot read it"),
        ]
        #expect(before.integrity == "ok" && before.workouts == 1 && before.heartRates == 200, "\(before)")
        #expect(before.heartbeatSeries == 1 && before.summarized == 1, "\(before)")
        for (path, says) in hostile {
            let result = try await s.systole(["import", path])
            #expect(result.status == 1, "\(path): \(result.standardOutput)")
            #expect(result.standardError.contains("not imported: "), "\(path): \(result.standardError)")
            #expect(result.standardError.contains(says), "\(path): \(result.standardError)")
            #expect(result.standardOutput.isEmpty, "\(path): \(result.standardOutput)")
        }
        #expect(try await s.storeCounts() == before)
        // Several files: the good ones go in, the refused one does not, and the status says so.
        var other = ActivityFiles.fitRun(start: 1_790_300_000)
        other.records = Array(other.records.prefix(50))
        let otherFile = try file("other.fit", try #require(try await ActivityFiles.writtenFIT([other]).first))
        let mixed = try await s.systole(["import", goodFile, try file("again-251.fit", written[1]), otherFile])
        #expect(mixed.status == 1)
        #expect(mixed.standardOutput.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 2)
        #expect(mixed.standardError.contains("1 of 3 files not imported"), "\(mixed.standardError)")
        var expected = before
        expected.workouts += 1
        expected.heartRates += 50
        expected.heartbeatSeries += 1
        expected.summarized += 1
        #expect(try await s.storeCounts() == expected)
    }

    static func decodedFIT(_ path: String) async throws -> [String: Any] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../WorkoutExportTests/decode_fit.py").standardized.path
        let output = try await PythonTools.run(script, [path])
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    static func checkedTCX(_ path: String) async throws -> [String: Any] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../WorkoutExportTests/check_tcx.py").standardized.path
        let output = try await PythonTools.run(script, [try await PythonTools.tcxSchema(), path])
        let reports = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]
        return try #require(reports?.first)
    }
}

extension DaemonHarness {
    /// `systole workouts --json`.
    fileprivate func workoutList() async throws -> [[String: Any]] {
        let result = try await systole(["workouts", "--json"])
        return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]] ?? []
    }

    /// What the store holds of workouts, read by another process while systoled runs: SQLite's integrity check,
    /// workouts, their heart-rate readings and heartbeat series (the simulator's sensor keeps adding readings of no
    /// workout), and the workouts the daily summaries count.
    fileprivate func storeCounts() async throws -> StoreCounts {
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            one = lambda sql: db.execute(sql).fetchone()[0]
            print(one("PRAGMA integrity_check"))
            print(one("SELECT count(*) FROM workout"))
            print(one("SELECT coalesce(sum(count), 0) FROM quantitySample WHERE workoutID IS NOT NULL AND type = 'heartRate'"))
            print(one("SELECT count(*) FROM heartbeatSeries WHERE workoutID IS NOT NULL"))
            print(one("SELECT coalesce(sum(workouts), 0) FROM activitySummary"))
            """
        let result = try await CommandRunner.run("/usr/bin/python3", ["-c", script, daemon.storePath])
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let numbers = lines.dropFirst().compactMap { Int($0) }
        guard lines.count == 5, numbers.count == 4 else {
            throw DaemonHarness.CommandFailed(description: result.standardOutput + result.standardError)
        }
        return StoreCounts(
            integrity: lines[0],
            workouts: numbers[0],
            heartRates: numbers[1],
            heartbeatSeries: numbers[2],
            summarized: numbers[3]
        )
    }
}

struct StoreCounts: Equatable {
    var integrity: String
    var workouts: Int
    var heartRates: Int
    var heartbeatSeries: Int
    var summarized: Int
}
