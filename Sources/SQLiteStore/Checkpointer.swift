import GRDB
import Synchronization

/// Copies the write-ahead log into the database file on a connection of its own, so that commits never wait for
/// it.
///
/// SQLite checkpoints automatically at the end of the commit that passes a thousand pages of log, on the committing
/// connection: that commit, and every save waiting for the next one, waited the checkpoint out (tens to hundreds of
/// milliseconds on a slow disk). With a hundred sensors that was the live log's slowest lines; flooded, the daemon
/// fell so far behind that its queue of readings overflowed. A passive checkpoint on another connection runs
/// beside the writer instead. It cannot start the log over while commits keep coming (only a writer finding it
/// all copied does), so SQLite's own checkpoint stays, at a larger log (see ``SQLiteHealthStore``): it then finds
/// only the last seconds left to copy.
final class Checkpointer: Sendable {
    private let queue: DatabaseQueue
    private let running = Mutex<Task<Void, Never>?>(nil)

    init(path: String) throws {
        var configuration = Configuration()
        configuration.label = "checkpointer"
        queue = try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Starts a checkpoint unless one is under way. Failures (a full disk) are left to the next one: the log
    /// keeps everything until it is copied.
    func checkpointSoon() {
        running.withLock { running in
            guard running == nil else { return }
            running = Task { [queue, self] in
                _ = try? await queue.writeWithoutTransaction { db in try db.checkpoint(.passive) }
                self.running.withLock { $0 = nil }
            }
        }
    }

    /// Waits for the checkpoint under way, if any.
    func settled() async {
        await running.withLock { $0 }?.value
    }
}
