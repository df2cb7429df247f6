import BlueZ
import Foundation
import HeartRateProfile
import HeartRateSensors
import Testing
import WorkoutKit

@testable import Recording

@Suite struct LiveLogTests {
    let date = Date(timeIntervalSince1970: 1_795_333_165.246)

    func reading(_ measurement: HeartRateMeasurement) throws -> HeartRateReading {
        HeartRateReading(
            sensor: try BluetoothAddress("A0:9E:1A:12:34:56"),
            measurement: measurement,
            receivedAt: .now,
            receivedDate: date,
            beats: [],
            isContinuous: true
        )
    }

    var running: WorkoutSnapshot {
        WorkoutSnapshot(state: .running, workoutID: UUID(), activity: .running, elapsed: 1390.4)
    }

    @Test func aLineHasEveryFieldInBothForms() throws {
        let m = HeartRateMeasurement(
            heartRate: 142,
            sensorContact: .detected,
            energyExpended: 123,
            rrIntervals: [RRInterval(ticks: 422), RRInterval(ticks: 408)]
        )
        let text = LiveLogLine.text(date: date, reading: try reading(m), snapshot: running, privacy: .full)
        #expect(
            text
                == "2026-11-22T07:39:25.246Z A0:9E:1A:12:34:56 bpm=142 contact=yes rr=412,398 energy=123kJ state=running elapsed=00:23:10"
        )
        let json = LiveLogLine.json(date: date, reading: try reading(m), snapshot: running, privacy: .full)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["time"] as? String == "2026-11-22T07:39:25.246Z")
        #expect(object["sensor"] as? String == "A0:9E:1A:12:34:56")
        #expect(object["bpm"] as? Int == 142)
        #expect(object["contact"] as? Bool == true)
        #expect(object["rr"] as? [Double] == [412.109, 398.438])
        #expect(object["energy"] as? Int == 123)
        #expect(object["state"] as? String == "running")
        #expect(object["elapsed"] as? Double == 1390.4)
    }

    @Test func aLineNamesTheAthleteQuotedWhenTheNameHasASpace() throws {
        let m = HeartRateMeasurement(heartRate: 142, sensorContact: .detected)
        let ana = LiveLogLine.text(
            date: date,
            reading: try reading(m),
            athlete: "Ana",
            snapshot: running,
            privacy: .full
        )
        #expect(
            ana
                == "2026-11-22T07:39:25.246Z A0:9E:1A:12:34:56 bpm=142 contact=yes athlete=Ana state=running elapsed=00:23:10"
        )
        let ben = LiveLogLine.text(
            date: date,
            reading: try reading(m),
            athlete: "Ben Lima",
            snapshot: running,
            privacy: .durationOnly
        )
        #expect(ben == "2026-11-22T07:39:25.246Z athlete=\"Ben Lima\" state=running elapsed=00:23:10")
        let json = LiveLogLine.json(
            date: date,
            reading: try reading(m),
            athlete: "Ben Lima",
            snapshot: running,
            privacy: .full
        )
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["athlete"] as? String == "Ben Lima")
    }

    @Test func withoutContactThereIsNoHeartRateNeverZero() throws {
        let m = HeartRateMeasurement(heartRate: 0, sensorContact: .notDetected)
        let text = LiveLogLine.text(date: date, reading: try reading(m), snapshot: running, privacy: .full)
        #expect(text == "2026-11-22T07:39:25.246Z A0:9E:1A:12:34:56 contact=no state=running elapsed=00:23:10")
        let json = LiveLogLine.json(date: date, reading: try reading(m), snapshot: running, privacy: .full)
        #expect(!json.contains("bpm"))
        let none = LiveLogLine.text(date: date, reading: nil, snapshot: running, privacy: .full)
        #expect(none == "2026-11-22T07:39:25.246Z state=running elapsed=00:23:10")
    }

    @Test func durationOnlyLeavesEveryMetricOut() throws {
        let m = HeartRateMeasurement(heartRate: 150, sensorContact: .detected, energyExpended: 9)
        let text = LiveLogLine.text(date: date, reading: try reading(m), snapshot: running, privacy: .durationOnly)
        #expect(text == "2026-11-22T07:39:25.246Z state=running elapsed=00:23:10")
        let json = LiveLogLine.json(date: date, reading: try reading(m), snapshot: running, privacy: .durationOnly)
        #expect(json == #"{"elapsed":1390.4,"state":"running","time":"2026-11-22T07:39:25.246Z"}"#)
        let idle = LiveLogLine.text(date: date, reading: try reading(m), snapshot: .idle, privacy: .durationOnly)
        #expect(idle == "2026-11-22T07:39:25.246Z state=idle")
    }

    @Test func theFileRotatesBySizeAndKeepsTheNewestFiles() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("live.log").path
        let file = try LiveLogFile(path: path, maximumSize: 100, keep: 2)
        for index in 0..<10 {
            try file.append([String(format: "line %02d ", index) + String(repeating: "x", count: 31)])
        }
        // 40 bytes a line, 100 bytes a file: two lines each; the oldest files are gone.
        let read = { (name: String) in
            try String(contentsOfFile: name, encoding: .utf8).split(separator: "\n").map { $0.prefix(7) }
        }
        #expect(try read(path) == ["line 08", "line 09"])
        #expect(try read(path + ".1") == ["line 06", "line 07"])
        #expect(try read(path + ".2") == ["line 04", "line 05"])
        #expect(!FileManager.default.fileExists(atPath: path + ".3"))
    }

    @Test func timestampsAreFoundationsISO8601AtTheNearestMillisecond() {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!)
        var generator = SystemRandomNumberGenerator()
        let milliseconds: [Int64] =
            [0, 951_782_400_000, 4_102_444_799_999]
            + (0..<2000).map { _ in Int64.random(in: 0...4_102_444_800_000, using: &generator) }
        for ms in milliseconds {
            // A date meant as a whole millisecond is a hair off it in floating point; Foundation truncates, so
            // it is asked about the middle of that millisecond, where truncating is unambiguous.
            let expected = Date(timeIntervalSince1970: (Double(ms) + 0.5) / 1000).formatted(style)
            #expect(LiveLogLine.timestamp(Date(timeIntervalSince1970: Double(ms) / 1000)) == expected)
        }
        #expect(LiveLogLine.timestamp(Date(timeIntervalSince1970: -0.001)) == "1969-12-31T23:59:59.999Z")
        #expect(LiveLogLine.timestamp(Date(timeIntervalSince1970: 0.9996)) == "1970-01-01T00:00:01.000Z")
    }

    @Test func aBatchOfLinesRotatesWhereLinesWrittenOneByOneWould() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let lines = (0..<10).map { String(format: "line %02d ", $0) + String(repeating: "x", count: 31) }
        var contents: [[String]] = []
        for batched in [false, true] {
            let path = folder.appendingPathComponent(batched ? "batched.log" : "single.log").path
            let file = try LiveLogFile(path: path, maximumSize: 100, keep: 3)
            if batched {
                try file.append(Array(lines[0..<3]))
                try file.append(Array(lines[3..<10]))
            } else {
                for line in lines { try file.append([line]) }
            }
            contents.append(
                try ["", ".1", ".2", ".3"].map { try String(contentsOfFile: path + $0, encoding: .utf8) }.flatMap {
                    $0.split(separator: "\n").map(String.init)
                }
            )
        }
        #expect(
            contents[0]
                == ["line 08", "line 09", "line 06", "line 07", "line 04", "line 05", "line 02", "line 03"].map {
                    $0 + " " + String(repeating: "x", count: 31)
                }
        )
        #expect(contents[1] == contents[0])
    }

    @Test func anUnwritableFolderIsAClearError() {
        let error = #expect(throws: LiveLogFile.Failure.self) {
            _ = try LiveLogFile(path: "/proc/systole/live.log", maximumSize: 4096, keep: 1)
        }
        #expect(error?.description.hasPrefix("cannot open the live log /proc/systole/live.log") == true)
    }

    @Test func aLinkInPlaceOfTheLiveLogIsRefusedAndItsTargetUntouched() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("victim").path
        try "precious\n".write(toFile: target, atomically: true, encoding: .utf8)
        let path = folder.appendingPathComponent("live.log").path
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        let error = #expect(throws: LiveLogFile.Failure.self) {
            _ = try LiveLogFile(path: path, maximumSize: 4096, keep: 1)
        }
        #expect(
            error?.description
                == "cannot open the live log \(path): it is a symbolic link; remove it (systoled writes only to a regular file of its own)"
        )
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "precious\n")
    }

    @Test func aFolderEveryUserMayWriteToIsRefusedEvenWithTheStickyBit() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: folder.path)
        let path = folder.appendingPathComponent("live.log").path
        let error = #expect(throws: LiveLogFile.Failure.self) {
            _ = try LiveLogFile(path: path, maximumSize: 4096, keep: 1)
        }
        #expect(error?.description.contains("every user may write to its folder \(folder.path)") == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aFIFOInPlaceOfTheLiveLogIsRefusedWithoutHanging() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("live.log").path
        #expect(mkfifo(path, 0o666) == 0)
        #expect(throws: LiveLogFile.Failure.self) { _ = try LiveLogFile(path: path, maximumSize: 4096, keep: 1) }
    }
}
