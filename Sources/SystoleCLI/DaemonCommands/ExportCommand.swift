import ArgumentParser
import ControlAPI
import DBus
import Foundation
import Glibc
import Replication
import WorkoutAnalysis

/// `systole export WORKOUT [--format fit|tcx|csv|rr|edf] [--source strap|ecg] [-o FILE|-]`: a finished workout as a
/// file, written by
/// systoled from its store (no access to the store's file needed).
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a workout as a FIT, TCX, CSV, RR-interval or EDF+ (ECG) file.",
        discussion: """
            fit: a FIT activity file (Garmin Connect, Strava, intervals.icu, GoldenCheetah); tcx: Training Center \
            XML; csv: a reading a row (time, elapsed, bpm, contact, RR in ms, energy, lap, marker); rr: the RR \
            intervals in ms, one a line, for Kubios and Elite HRV; edf: the ECG of a Polar H10 as EDF+ (µV at the \
            measured rate, systole's R-peaks as annotations) for EDFbrowser, MNE and pyedflib. --source ecg makes \
            csv a row per ECG sample (time, elapsed_s, ecg_uv, r_peak, gap) and rr the intervals between the \
            R-peaks systole finds in the ECG. Without -o the file is named from the workout's \
            start and activity (2026-11-24-0730-running.fit) in the current folder, and an existing file of that \
            name is left alone. Files are created readable by you only (0600): they hold health data. See \
            docs/export.md.
            """
    )

    static let formats = ["fit", "tcx", "csv", "rr", "edf"]

    @Argument(help: "The workout's id (its first characters are enough); leave out with --last.") var workout: String?
    @Flag(help: "Export the most recent workout.") var last = false
    @Option(help: "fit (default), tcx, csv, rr or edf.") var format = "fit"
    @Option(help: "What csv and rr are made from: strap (the heart rate and RR intervals it sent; the default) or ecg.")
    var source = "strap"
    @Option(name: .shortAndLong, help: ArgumentHelp("The file to write, or - for standard output.", valueName: "file"))
    var output: String?
    @OptionGroup var daemon: ControlOptions
    @OptionGroup var central: CentralOptions

    func validate() throws {
        guard Self.formats.contains(format) else {
            throw ValidationError("--format takes fit, tcx, csv, rr or edf, not '\(format)'")
        }
        guard source == "strap" || source == "ecg" else {
            throw ValidationError("--source takes strap or ecg, not '\(source)'")
        }
        if source == "ecg", format != "csv", format != "rr" {
            throw ValidationError("--source ecg is for csv and rr (edf is always the ECG)")
        }
        if last, workout != nil { throw ValidationError("give a workout id or --last, not both") }
        if !last, workout == nil { throw ValidationError("give a workout id, or --last for the most recent") }
    }

    func run() async throws {
        if output == "-", format == "fit" || format == "edf", isatty(STDOUT_FILENO) == 1 {
            // FIT and EDF files are binary: on a terminal they are noise that can leave it in a strange state.
            throw CommandFailure.invalidInput(
                "a \(format.uppercased()) file is binary and standard output is a terminal: redirect it "
                    + "(> run.\(format)) or use -o FILE"
            )
        }
        if let address = try central.address() {
            try await exportFromCentral(address)
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
        // systoled writes the file into a pipe as it makes it, and answers with its name and size once it is all
        // written: the file never travels through the bus, and a cut-short one is told by its size.
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw CommandFailure.invalidInput("cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let target: ExportTarget
        do {
            target = try ExportTarget(output: output)
        } catch {
            close(readEnd)
            close(writeEnd)
            throw error
        }
        async let copied = target.copy(from: readEnd)
        let reply: [DBusValue]
        do {
            // The call holds a copy of the write end; this one closes so the copy sees the end when systoled's does.
            defer { close(writeEnd) }
            reply = try await client.call(
                "ExportWorkout",
                [.string(id), .string(exportFormat.rawValue), .unixFD(writeEnd)],
                timeout: .seconds(330)
            )
        } catch {
            _ = try? await copied
            target.discard()
            throw error
        }
        let count: Int
        do {
            count = try await copied
        } catch {
            target.discard()
            throw error
        }
        guard reply.count == 2, let suggested = reply[0].string, case .uint64(let size) = reply[1] else {
            target.discard()
            throw CommandFailure.invalidInput(
                "systoled sent an export this systole cannot read: update systole and systoled together"
            )
        }
        guard UInt64(count) == size else {
            target.discard()
            throw CommandFailure.invalidInput("the export was cut short: \(count) of \(size) bytes arrived; try again")
        }
        try finish(target, suggested: suggested)
    }

    /// A workout of the central database (`--database`), made here.
    private func exportFromCentral(_ address: PostgresAddress) async throws {
        let (workout, last, format) = (workout, last, exportFormat)
        let recording = try await central.with(address) { database in
            let entry: CentralDatabase.Entry
            if let workout {
                entry = try await CentralWorkouts.one(workout, in: database)
            } else if last, let latest = try await database.workouts().entries.last {
                entry = latest
            } else {
                throw CommandFailure.invalidInput("no workouts in the central database: nothing to export")
            }
            var recording = ActivityRecording(
                workout: entry.workout,
                samples: try await database.samples(ofWorkout: entry.workout.id)
            )
            if format.needsECG {
                recording.electrocardiogram = try await database.waveforms(
                    .electrocardiogram,
                    ofWorkout: entry.workout.id
                )
                guard !recording.electrocardiogram.isEmpty else {
                    throw CommandFailure.invalidInput("the workout holds no ECG in the central database")
                }
                if format == .edf {
                    recording.acceleration = try await database.waveforms(.acceleration, ofWorkout: entry.workout.id)
                }
            }
            return recording
        }
        let target = try ExportTarget(output: output)
        do {
            try format.write(recording) { chunk in try chunk.withUnsafeBytes { try target.write($0) } }
        } catch {
            target.discard()
            throw error
        }
        try finish(target, suggested: format.fileName(for: recording))
    }

    /// The format systoled is asked for: --format with --source.
    private var exportFormat: ExportFormat {
        switch (format, source) {
        case ("csv", "ecg"): .ecgCSV
        case ("rr", "ecg"): .rrFromECG
        default: ExportFormat(rawValue: format) ?? .fit
        }
    }

    /// Names the file: FILE with `-o FILE`, else the suggested name (only its last component, so it cannot point
    /// elsewhere), and says so.
    private func finish(_ target: ExportTarget, suggested: String) throws {
        guard output != "-" else { return }
        let last = suggested.split(separator: "/").last.map(String.init) ?? ""
        let name = output ?? (last.isEmpty || last.hasPrefix(".") ? "workout.\(exportFormat.fileExtension)" : last)
        try target.commit(as: name, replacing: output != nil)
        FileHandle.standardError.write(Data("Wrote \(name) (\(target.written) bytes)\n".utf8))
    }
}
