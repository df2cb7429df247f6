import FITFormat
import Foundation
import SystoleTestSupport
import Testing
import WorkoutAnalysis
import WorkoutKit

@testable import WorkoutExport

/// The FIT activity file, checked by the decoders FIT's users rely on: Garmin's own (PyPI `garmin-fit-sdk`, with its
/// integrity check) and `fitdecode`, from the venv scripts/python-tools.sh makes.
@Suite struct FITActivityFileTests {
    /// Decodes `bytes` with both decoders.
    static func decode(_ bytes: [UInt8]) async throws -> [String: Any] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("systole-\(UUID()).fit")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("decode_fit.py")
        let output = try await PythonTools.run(script.path, [file.path])
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    static let start = Date(timeIntervalSince1970: 1_795_333_160)

    /// Twenty minutes of running with a two-minute pause, two laps, a marker, a reading a second, and beats in two
    /// runs with a gap.
    static func recording() -> ActivityRecording {
        let pause = DateInterval(start: start + 600, duration: 120)
        let readings = (0..<1200).compactMap { second -> ActivityRecording.Reading? in
            let date = start + Double(second)
            return pause.contains(date) ? nil : .init(date: date, bpm: 120 + Double(second % 40))
        }
        var beats: [ActivityRecording.Beat] = []
        for run in 0..<2 {
            var date = start + Double(run * 700)
            for index in 0..<300 {
                let ticks = UInt16(512 + (index + run * 7) % 50)
                date += Double(ticks) / 1024
                beats.append(.init(date: date, rrTicks: ticks, precededByGap: index == 0 && run > 0))
            }
        }
        return ActivityRecording(
            activity: .running,
            start: start,
            end: start + 1200,
            pauses: [pause],
            laps: [DateInterval(start: start, duration: 600), DateInterval(start: start + 600, duration: 600)],
            markers: [.init(date: start + 300, text: "gel")],
            readings: readings,
            beats: beats,
            energy: .init(kilojoules: 240 * 4.184, isEstimated: true),
            sensors: [.init(fitManufacturer: 123, name: "Polar H10 91948D23", batteryPercent: 80)]
        )
    }

    @Test func aStringIsCutAtTheEndOfACharacter() {
        // 40 two-byte characters into a 32-byte field: 15 whole ones (30 bytes), then zeros; never half of one.
        let values = FITWriter.stringValues(String(repeating: "é", count: 40), count: 32)
        #expect(values.count == 32)
        let bytes = values.map { UInt8($0) }
        let text = String(validating: Array(bytes.prefix { $0 != 0 }), as: UTF8.self)
        #expect(text == String(repeating: "é", count: 15))
        #expect(bytes.suffix(2) == [0, 0])
    }

    @Test func theCRCIsFITs() {
        // The SDK's CRC of "123456789" (CRC-16/ARC).
        #expect(FITCRC.of(Array("123456789".utf8)) == 0xBB3D)
    }

    @Test func garminsDecoderAndFitdecodeReadTheSameReadingsAndBeats() async throws {
        let recording = Self.recording()
        let decoded = try await Self.decode(FITActivityFile.encode(recording))
        #expect(decoded["garmin_is_fit"] as? Bool == true)
        #expect(decoded["garmin_integrity"] as? Bool == true)
        #expect((decoded["garmin_errors"] as? [Any])?.isEmpty == true, "\(decoded["garmin_errors"] ?? "")")
        #expect((decoded["fitdecode_errors"] as? [Any])?.isEmpty == true, "\(decoded["fitdecode_errors"] ?? "")")
        let heartRates = recording.readings.map { Int($0.bpm) }
        #expect(decoded["garmin_heart_rates"] as? [Int] == heartRates)
        #expect(decoded["fitdecode_heart_rates"] as? [Int] == heartRates)
        // RR in seconds, at the file's millisecond resolution, each run in messages of its own.
        for key in ["garmin_hrv", "fitdecode_hrv"] {
            let messages = try #require(decoded[key] as? [[Double]], "\(key)")
            let expected = recording.beatRuns.map { $0.map(\.seconds) }.flatMap { run in
                stride(from: 0, to: run.count, by: 5).map { Array(run[$0..<min($0 + 5, run.count)]) }
            }
            #expect(messages.count == expected.count, "\(key)")
            for (message, beats) in zip(messages, expected) {
                #expect(message.count == beats.count)
                for (read, beat) in zip(message, beats) { #expect(abs(read - beat) <= 0.001, "\(read) ≠ \(beat)") }
            }
        }
        let session = try #require(decoded["garmin_session"] as? [String: Any])
        #expect(session["sport"] as? String == "running")
        #expect(session["total_elapsed_time"] as? Double == 1200)
        #expect(session["total_timer_time"] as? Double == 1080)
        #expect(session["max_heart_rate"] as? Int == 159)
        #expect(session["total_calories"] as? Int == 240)
        #expect(session["num_laps"] as? Int == 2)
        #expect(decoded["garmin_laps"] as? Int == 2)
        let events = try #require(decoded["garmin_events"] as? [[String]])
        #expect(events.map { $0.last ?? "" } == ["start", "marker", "stop_all", "start", "stop_all"])
        #expect(events.map { $0.first ?? "" } == ["timer", "user_marker", "timer", "timer", "timer"])
        #expect(decoded["garmin_battery"] as? [Int] == [80])
        #expect(decoded["garmin_manufacturers"] as? [String] == ["polar_electro"])
        #expect(decoded["garmin_athletes"] as? [String] == [], "no user_profile without an athlete")
    }

    @Test func theAthleteIsTheUserProfilesFriendlyName() async throws {
        var recording = Self.recording()
        recording.athlete = "Zoë O'Neil-Ávila"
        let decoded = try await Self.decode(FITActivityFile.encode(recording))
        #expect(decoded["garmin_integrity"] as? Bool == true)
        #expect((decoded["garmin_errors"] as? [Any])?.isEmpty == true, "\(decoded["garmin_errors"] ?? "")")
        #expect(decoded["garmin_athletes"] as? [String] == ["Zoë O'Neil-Ávila"])
        #expect(decoded["fitdecode_athletes"] as? [String] == ["Zoë O'Neil-Ávila"])
        #expect(decoded["garmin_heart_rates"] as? [Int] == recording.readings.map { Int($0.bpm) })
    }
}
