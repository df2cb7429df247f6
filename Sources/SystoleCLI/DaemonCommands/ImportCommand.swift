import ArgumentParser
import ControlAPI
import DBus
import Foundation
import WorkoutImport

/// `systole import FILE…`: activities from FIT and TCX files other devices and services wrote, saved by systoled
/// as workouts. The file is read here, as you; systoled gets only the checked values.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import workouts from FIT and TCX activity files (Garmin, Polar, Wahoo, Coros, Strava exports).",
        discussion: """
            Each file's activities become workouts as if systole had recorded them: the heart rate, the RR \
            intervals of a FIT file's HRV messages, pauses (the timer's stops), laps and energy, with the device \
            that recorded them; the workout is marked imported. A file whose activity is already in the store \
            (the same start and device) is skipped, so importing a folder again is harmless. A file that cannot \
            be read, or holds a value out of range, is refused with what is wrong and where, and nothing of it \
            is imported; the other files still are. Strava's .fit.gz and .tcx.gz files must be unpacked first \
            (gunzip). Exit status 1 when any file was refused. See docs/import.md.
            """
    )

    @Argument(help: ArgumentHelp("FIT or TCX activity files.", valueName: "file")) var files: [String]
    @OptionGroup var daemon: ControlOptions

    func validate() throws {
        if files.isEmpty { throw ValidationError("give one or more FIT or TCX files") }
    }

    func run() async throws {
        let client = try await daemon.connect()
        var refused = 0
        for file in files {
            do {
                try await importFile(file, client: client)
            } catch let failure as CommandFailure {
                refused += 1
                printError("systole: \(WorkoutText.printable(file)): not imported: \(failure.message)")
            }
        }
        if refused > 0 {
            throw CommandFailure.invalidInput(
                "\(refused) of \(files.count) file\(files.count == 1 ? "" : "s") not imported"
            )
        }
    }

    private func importFile(_ file: String, client: DaemonClient) async throws {
        let activities: [ImportedActivity]
        do {
            activities = try ActivityFile.read(try Self.contents(of: file))
        } catch let error as ImportError {
            throw CommandFailure.invalidInput(error.description)
        }
        // systoled checks the values again and stores the file in one transaction: a fraction of a second even at
        // the limit, but its answer may wait behind a busy store.
        let reply = try await client.call(
            "ImportWorkouts",
            [ImportValues.value(of: activities)],
            timeout: .seconds(300)
        )
        let outcomes = reply.first?.array ?? []
        for (activity, outcome) in zip(activities, outcomes) {
            guard let fields = outcome.fields, fields.count == 2, let id = fields[0].string, let saved = fields[1].bool,
                let uuid = UUID(uuidString: id)
            else { continue }
            let values = WorkoutValues.values(of: activity.workout(id: uuid))
            let what = saved ? "imported" : "already imported"
            print("\(what): \(WorkoutText.date(values["start"])) \(WorkoutText.summary(values))")
        }
    }

    /// The file's bytes, at most ``ActivityFile/maximumSize`` of them.
    static func contents(of path: String) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CommandFailure.invalidInput("cannot open it (no such file, or not permitted)")
        }
        defer { try? handle.close() }
        do {
            let data = try handle.read(upToCount: ActivityFile.maximumSize + 1) ?? Data()
            guard data.count <= ActivityFile.maximumSize else {
                throw CommandFailure.invalidInput(
                    "larger than \(ActivityFile.maximumSize >> 20) MiB, more than an activity file holds"
                )
            }
            return [UInt8](data)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.invalidInput("cannot read it: \(error.localizedDescription)")
        }
    }
}
