import Foundation
import Testing
import WorkoutAnalysis
import WorkoutExport

/// Exports written a chunk at a time: a large file comes in several chunks, none much larger than 64 KiB (what
/// the files say is checked by their decoders in the other suites), and a sink that fails (the reader went away)
/// stops the writing and is told.
struct StreamedExportTests {
    /// Three hours at a reading a second, with a beat every 0.8 s.
    static func longRecording() -> ActivityRecording {
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        return ActivityRecording(
            activity: .cycling,
            start: start,
            end: start + 10_800,
            laps: [DateInterval(start: start, end: start + 10_800)],
            readings: (0..<10_800).map { .init(date: start + Double($0), bpm: 120 + Double($0 % 40)) },
            beats: (1...13_500).map { .init(date: start + Double($0) * 0.8, rrTicks: 819, precededByGap: false) }
        )
    }

    typealias Writer = (ActivityRecording, @escaping ExportSink) throws -> Void
    static var formats: [(String, Writer)] {
        [
            ("fit", FITActivityFile.write), ("tcx", TCXActivityFile.write), ("csv", CSVActivityFile.write),
            ("rr", RRIntervalFile.write),
        ]
    }

    @Test func aLargeFileComesInBoundedChunks() throws {
        let recording = Self.longRecording()
        for (name, write) in Self.formats {
            var chunks: [[UInt8]] = []
            try write(recording) { chunks.append($0) }
            #expect(
                chunks.allSatisfy { $0.count <= 64 * 1024 + 4 * 1024 },
                "\(name): \(chunks.map(\.count).max() ?? 0)"
            )
            if name != "rr" { #expect(chunks.count > 1, "\(name) came in \(chunks.count) chunk") }
        }
    }

    struct ReaderGone: Error {}

    @Test func aFailingSinkStopsTheWritingAndIsTold() {
        let recording = Self.longRecording()
        for (name, write) in Self.formats where name != "rr" {
            var calls = 0
            #expect(throws: ReaderGone.self, "\(name)") {
                try write(recording) { _ in
                    calls += 1
                    if calls == 1 { throw ReaderGone() }
                }
            }
            #expect(calls == 1, "\(name): the sink was called \(calls) times")
        }
    }
}
