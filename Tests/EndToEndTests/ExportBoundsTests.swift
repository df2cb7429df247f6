import ControlAPI
import DBus
import Foundation
import Glibc
import SystoleTestSupport
import Testing

/// A day-long workout exported while an honest strap records, over the web by a slow client and over D-Bus with
/// `systole export`: one export at a time (the other is told to try again), the same bytes either way, systoled's
/// memory bounded while it writes them, a descriptor that takes no writing refused without holding the next export
/// up, and the strap's readings logged as they arrive throughout.
@Suite(.serialized) struct ExportBoundsTests {
    static let hours = 24

    @Test func aLongWorkoutIsStreamedOneExportAtATimeWhileRecordingGoesOn() async throws {
        let workoutID = WorkoutIDBox()
        let s = try await WebPageTests.start(configuration: WebPageTests.http) { folder in
            let made = try await CommandRunner.run(
                "store-probe",
                [folder.appendingPathComponent("health.sqlite").path, "long-workout", "\(Self.hours)"]
            )
            try #require(made.status == 0, "\(made.standardError)")
            workoutID.value = made.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        defer { s.stop() }
        try await s.startWorkout()
        let daemon = s.daemon
        // What the exports cost: systoled's own (anonymous) memory, looked at every 20 ms while they run; the
        // resident total also counts the pages of its code, which a debug build has many of.
        let before = daemon.memory("RssAnon")
        let sampler = Task {
            var peak = 0
            while !Task.isCancelled {
                peak = max(peak, daemon.memory("RssAnon"))
                try? await Task.sleep(for: .milliseconds(20))
            }
            return peak
        }

        // A client on a poor link downloads the CSV file; meanwhile `systole export` is told to try again.
        let downloaded = s.folder.appendingPathComponent("download.csv").path
        let ready = s.folder.appendingPathComponent("download.ready").path
        // The download stops reading after its first bytes until this exists: its export is under way, whatever
        // the socket buffers hold and however long the other command takes to start on a busy machine.
        let hold = s.folder.appendingPathComponent("download.hold").path
        let started = Date()
        // Debian's own python (the script needs nothing else), not the tools' venv: those scripts run one at a
        // time, and the download must start while the other export is asked for.
        async let download = CommandRunner.run(
            "/usr/bin/python3",
            [
                WebPageTests.webFolder.appendingPathComponent("slow_download.py").path,
                s.base + "/api/workouts/\(workoutID.value)/export/csv", "--bearer", WebPageTests.token,
                "--out", downloaded, "--ready", ready, "--hold", hold,
            ]
        )
        try await waitUntil("the download's first bytes") { FileManager.default.fileExists(atPath: ready) }
        let refused = try await s.systole("export", workoutID.value, "--format", "csv", "-o", s.folder.path + "/no.csv")
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("another export is under way"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: s.folder.path + "/no.csv"))
        _ = FileManager.default.createFile(atPath: hold, contents: Data())
        let downloadResult = try await download
        #expect(downloadResult.status == 0, "\(downloadResult.standardError)")
        let answer = try JSONSerialization.jsonObject(with: Data(downloadResult.standardOutput.utf8)) as? [String: Any]
        #expect(answer?["status"] as? Int == 200, "\(answer ?? [:])")

        // Then the same file through D-Bus, byte for byte.
        let exported = s.folder.appendingPathComponent("exported.csv").path
        let export = try await s.systole("export", workoutID.value, "--format", "csv", "-o", exported)
        #expect(export.status == 0, "\(export.standardError)")
        let ended = Date()
        let file = try Data(contentsOf: URL(fileURLWithPath: exported))
        #expect(file == (try Data(contentsOf: URL(fileURLWithPath: downloaded))))
        // A row a reading, and the header.
        #expect(file.split(separator: UInt8(ascii: "\n")).count == Self.hours * 3600 + 1)

        sampler.cancel()
        let peak = await sampler.value
        print(
            "exports of a \(Self.hours)-hour workout: \(file.count) bytes each; systoled's anonymous memory "
                + "\(before / 1024) MiB before, at most \(peak / 1024) MiB while exporting"
        )
        #expect(peak - before < 24 * 1024, "at most \(peak) KiB while exporting, \(before) KiB before")

        // A caller's descriptor that takes no writing (read-only): the export stops with why, and frees its slot.
        let readOnly = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(readOnly) }
        let connection = try await DBusConnection.connect(to: .address(s.bus.address))
        defer { connection.close() }
        var stopped: DBusError?
        do {
            _ = try await connection.call(
                destination: ControlAPI.busName,
                path: ControlAPI.objectPath,
                interface: ControlAPI.interface,
                method: "ExportWorkout",
                arguments: [.string(workoutID.value), .string("fit"), .unixFD(readOnly)],
                timeout: .seconds(60)
            )
        } catch {
            stopped = error
        }
        #expect(stopped?.message.contains("the export stopped") == true, "\(stopped?.message ?? "accepted")")
        let again = try await s.systole("export", workoutID.value, "--format", "fit", "-o", s.folder.path + "/w.fit")
        #expect(again.status == 0, "\(again.standardError)")

        // The strap's readings were logged as they arrived all along: never a silence of more than a few seconds.
        let times = s.daemon.liveLogLines().compactMap { line -> Date? in
            guard line.contains("state=running"), let first = line.split(separator: " ").first else { return nil }
            return try? Date(String(first), strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }.filter { $0 > started && $0 < ended }
        let longest = zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }.max() ?? .infinity
        #expect(longest < 5, "the longest silence of the honest strap's log during the exports: \(longest) s")
    }
}

/// The probe's workout id, set while the folder is prepared.
final class WorkoutIDBox: @unchecked Sendable {
    var value = ""
}
