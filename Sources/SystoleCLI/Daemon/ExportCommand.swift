import ArgumentParser
import DBus
import Foundation
import Glibc
import Replication
import WorkoutAnalysis
import WorkoutReports

/// `systole export WORKOUT [--format fit|tcx|csv|rr] [-o FILE|-]`: a finished workout as a file, written by
/// systoled from its store (no access to the store's file needed).
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a workout as a FIT, TCX, CSV or RR-interval file.",
        discussion: """
            fit: a FIT activity file (Garmin Connect, Strava, intervals.icu, GoldenCheetah); tcx: Training Center \
            XML; csv: a reading a row (time, elapsed, bpm, contact, RR in ms, energy, lap, marker); rr: the RR \
            intervals in ms, one a line, for Kubios and Elite HRV. Without -o the file is named from the workout's \
            start and activity (2026-11-24-0730-running.fit) in the current folder, and an existing file of that \
            name is left alone. Files are created readable by you only (0600): they hold health data. See \
            docs/export.md.
            """
    )

    static let formats = ["fit", "tcx", "csv", "rr"]

    @Argument(help: "The workout's id (its first characters are enough); leave out with --last.") var workout: String?
    @Flag(help: "Export the most recent workout.") var last = false
    @Option(help: "fit (default), tcx, csv or rr.") var format = "fit"
    @Option(name: .shortAndLong, help: ArgumentHelp("The file to write, or - for standard output.", valueName: "file"))
    var output: String?
    @OptionGroup var daemon: ControlOptions
    @OptionGroup var central: CentralOptions

    func validate() throws {
        guard Self.formats.contains(format) else {
            throw ValidationError("--format takes fit, tcx, csv or rr, not '\(format)'")
        }
        if last, workout != nil { throw ValidationError("give a workout id or --last, not both") }
        if !last, workout == nil { throw ValidationError("give a workout id, or --last for the most recent") }
    }

    func run() async throws {
        if let address = try central.address() {
            let (workout, last, format) = (workout, last, ExportFormat(rawValue: format) ?? .fit)
            let (name, content) = try await central.with(address) { database in
                let entry: CentralDatabase.Entry
                if let workout {
                    entry = try await CentralWorkouts.one(workout, in: database)
                } else if last, let latest = try await database.workouts().entries.last {
                    entry = latest
                } else {
                    throw CommandFailure.invalidInput("no workouts in the central database: nothing to export")
                }
                let recording = ActivityRecording(
                    workout: entry.workout,
                    samples: try await database.samples(ofWorkout: entry.workout.id)
                )
                return (format.fileName(for: recording), format.encode(recording))
            }
            switch content {
            case .bytes(let bytes): try write(bytes, suggested: name)
            case .text(let text): try write(Array(text.utf8), suggested: name)
            }
            return
        }
        let client = try await daemon.connect()
        let id: String
        if let workout {
            id = workout
        } else {
            let workouts = try await client.call("ListWorkouts").first?.array ?? []
            guard let latest = workouts.map(\.map).max(by: { ($0["start"]?.number ?? 0) < ($1["start"]?.number ?? 0) }),
                let latestID = latest["id"]?.string
            else { throw CommandFailure.invalidInput("no workouts yet: nothing to export") }
            id = latestID
        }
        let reply = try await client.call("ExportWorkout", [.string(id), .string(format)], timeout: .seconds(60))
        let unreadable = CommandFailure.invalidInput(
            "systoled sent an export this systole cannot read: update systole and systoled together"
        )
        guard reply.count == 2, let suggested = reply[0].string else { throw unreadable }
        let content = reply[1].unwrapped
        let bytes: [UInt8]
        if let text = content.string {
            bytes = Array(text.utf8)
        } else if let data = content.bytes {
            bytes = data
        } else {
            throw unreadable
        }
        try write(bytes, suggested: suggested)
    }

    /// Writes the file: to standard output with `-o -`, to FILE with `-o FILE`, else under the suggested name.
    private func write(_ bytes: [UInt8], suggested: String) throws {
        if output == "-" {
            // A FIT file is binary: on a terminal it is noise that can leave the terminal in a strange state.
            if format == "fit", isatty(STDOUT_FILENO) == 1 {
                throw CommandFailure.invalidInput(
                    "a FIT file is binary and standard output is a terminal: redirect it (> run.fit) or use -o FILE"
                )
            }
            FileHandle.standardOutput.write(Data(bytes))
            return
        }
        // The suggested name is systoled's: only its last component, so it cannot point elsewhere.
        let last = suggested.split(separator: "/").last.map(String.init) ?? ""
        let name = output ?? (last.isEmpty || last.hasPrefix(".") ? "workout.\(format)" : last)
        try Self.write(bytes, to: name, replacing: output != nil)
        FileHandle.standardError.write(Data("Wrote \(name) (\(bytes.count) bytes)\n".utf8))
    }

    /// Writes the file whole or not at all: into a temporary file beside it, then renamed over it.
    static func write(_ bytes: [UInt8], to path: String, replacing: Bool) throws {
        if !replacing, FileManager.default.fileExists(atPath: path) {
            throw CommandFailure.invalidInput("\(path) exists; name another file with -o, or remove it first")
        }
        let temporary = path + ".part-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CommandFailure.invalidInput("cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        var written = 0
        let failed = bytes.withUnsafeBytes { buffer -> Int32? in
            while written < buffer.count {
                let count = Glibc.write(fd, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += count
            }
            return fsync(fd) == 0 ? nil : errno
        }
        close(fd)
        if let failed {
            unlink(temporary)
            throw CommandFailure.invalidInput("cannot write \(path): \(String(cString: strerror(failed)))")
        }
        guard rename(temporary, path) == 0 else {
            let error = errno
            unlink(temporary)
            throw CommandFailure.invalidInput("cannot write \(path): \(String(cString: strerror(error)))")
        }
    }
}
