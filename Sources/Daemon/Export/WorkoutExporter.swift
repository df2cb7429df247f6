import ControlAPI
import Foundation
import Glibc
import LiveFeed
import SQLiteStore
import WorkoutAnalysis
import WorkoutKit

/// Makes workouts' files, one at a time, each on a thread of its own: an export never runs on the bus's loop
/// thread, the workout thread or the concurrency pool, and the file is written as it is made, never held whole.
/// The recording is read a chunk at a time within ``SampleCollector/defaultLimit``.
actor WorkoutExporter {
    /// How long a reader may take nothing before its export is given up.
    static let progressTimeout: Duration = .seconds(30)
    /// How long one export may take in all.
    static let longest: Duration = .seconds(300)

    /// Why an export was not made.
    enum Refusal: Error, CustomStringConvertible {
        /// Another export is under way.
        case busy
        case tooLarge(SampleCollector.TooLarge)
        /// The format is made from the ECG, and the workout has none.
        case noECG

        var description: String {
            switch self {
            case .busy: "another export is under way; systoled makes one at a time: try again when it ends"
            case .tooLarge(let refusal): "\(refusal)"
            case .noECG:
                "the workout holds no ECG (recorded with [ecg] enabled in systoled.toml and a Polar H10): choose "
                    + "fit, tcx, csv or rr"
            }
        }
    }

    private let store: SQLiteHealthStore
    private var busy = false

    init(store: SQLiteHealthStore) {
        self.store = store
    }

    /// Writes `workout` as `format` into `fd` (closed when done, whatever happens), and returns the file's name and
    /// the bytes written once the whole file is. Throws ``Refusal`` before anything is written.
    func write(_ workout: Workout, as format: ExportFormat, into fd: Int32) async throws -> (name: String, size: Int) {
        let recording: ActivityRecording
        do {
            recording = try await begin(workout, format)
        } catch {
            close(fd)
            throw error
        }
        defer { busy = false }
        let size = try await Self.onThreadOfItsOwn { () throws -> Int in
            defer { close(fd) }
            var writer = DescriptorWriter(fd: fd, progressTimeout: Self.progressTimeout, deadline: .now + Self.longest)
            try format.write(recording) { chunk in try writer.write(chunk) }
            return writer.written
        }
        return (format.fileName(for: recording), size)
    }

    /// Starts writing `workout` as `format` and returns at once with the file's name and its bytes as they come:
    /// the reader (an HTTP response) takes them; one that stops taking them ends the export.
    func stream(_ workout: Workout, as format: ExportFormat) async throws -> (name: String, chunks: ExportChunks) {
        let recording = try await begin(workout, format)
        let chunks = ExportChunks()
        let deadline = ContinuousClock.now + Self.longest
        Self.startThread {
            do {
                try format.write(recording) { chunk in
                    guard ContinuousClock.now < deadline else {
                        throw DescriptorWriter.Failure(
                            description: "the export took longer than systoled allows for one (the reader is slow)"
                        )
                    }
                    try chunks.send(chunk, timeout: Self.progressTimeout)
                }
                chunks.finish()
            } catch {
                chunks.abandon()
                chunks.finish(throwing: error)
            }
            Task { await self.end() }
        }
        return (format.fileName(for: recording), chunks)
    }

    /// Takes the one export slot and reads the recording (with its ECG when the format needs it); the slot is
    /// given back on failure.
    private func begin(_ workout: Workout, _ format: ExportFormat) async throws -> ActivityRecording {
        guard !busy else { throw Refusal.busy }
        busy = true
        do {
            var recording = try await ActivityRecording.read(workout, from: store)
            if format.needsECG {
                recording.electrocardiogram = try await store.waveforms(.electrocardiogram, ofWorkout: workout.id)
                guard !recording.electrocardiogram.isEmpty else { throw Refusal.noECG }
                if format == .edf {
                    recording.acceleration = try await store.waveforms(.acceleration, ofWorkout: workout.id)
                }
            }
            return recording
        } catch let refusal as SampleCollector.TooLarge {
            busy = false
            throw Refusal.tooLarge(refusal)
        } catch {
            busy = false
            throw error
        }
    }

    private func end() { busy = false }

    /// Runs `body` on a new thread and returns what it returns.
    private static func onThreadOfItsOwn<T: Sendable>(
        _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            startThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Starts a thread for `body` that ignores SIGPIPE: a reader that went away is an error of its export, not the
    /// end of systoled.
    private static func startThread(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            body()
        }
        thread.name = "systoled-export"
        thread.start()
    }
}
