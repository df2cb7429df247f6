import Dispatch
import Glibc
import Synchronization

extension SQLiteHealthStore {
    /// When the store's commits reach the disk.
    ///
    /// Every commit survives a crash of the process in either mode: SQLite has written it to the write-ahead log
    /// before the commit returns, and the kernel keeps it. Only a power cut or a crash of the kernel can take commits
    /// that were not synced, and in WAL mode it never damages the store: the log is read back up to its last whole
    /// commit that reached the disk.
    public enum Synchronization: Sendable, Equatable {
        /// Every commit is synced before it returns (SQLite's `synchronous = FULL`): a power cut loses nothing that
        /// was saved.
        case everyCommit
        /// Samples' commits return once written; the log is synced at most `interval` after the first commit not
        /// yet synced (on the committing thread when it may wait for the disk, `commitsInPlace`, and the last sync
        /// began an interval ago or more; otherwise timed, on a queue of its own), and at once after every other
        /// write (workouts, the journal of a workout in progress, deletions). A power cut loses at most the samples
        /// of the last `interval`, plus the time the sync takes.
        case periodically(interval: Duration)

        /// systoled's `sync = "second"`: synced within half a second, so that with the time to read a reading,
        /// commit it and sync, a power cut takes at most the last second.
        public static let everySecond = Synchronization.periodically(interval: .milliseconds(500))
    }
}

/// Syncs the write-ahead log of a store whose commits are not synced (`synchronous = NORMAL`): at most a set time
/// after the first commit that was not, and at once when asked.
///
/// A commit made on a thread that may wait for the disk (systoled's workout thread) syncs there itself when the
/// last sync began an interval ago or more: a strap at 1 Hz, whose every commit needs a sync of its own anyway,
/// then wakes no other thread for it. Commits closer together share one sync, timed on a queue of its own.
///
/// `fdatasync` on a descriptor of the log's file of our own makes every frame SQLite wrote durable, whichever
/// descriptor wrote it: the kernel keeps a file's pages by file, not by descriptor. SQLite also makes the entry of a
/// new log in its folder durable (at its first sync, which NORMAL makes only at a checkpoint), so this does it too
/// whenever it opens a log file it has not synced before.
final class LogSync: Sendable {
    private struct State {
        /// The descriptor of the log and its inode, open from the first sync on.
        var descriptor: Int32 = -1
        var inode: ino_t = 0
        /// A commit was made since the last sync began.
        var unsynced = false
        /// A timed sync is on its way.
        var armed = false
        /// When the last sync began.
        var lastSync: ContinuousClock.Instant?
        /// A failed timed sync, reported by the next write.
        var failure: HealthStoreError?
        /// Syncs done (tests).
        var syncs = 0
    }

    private let logPath: String
    private let folderPath: String
    private let storePath: String
    private let interval: Duration
    private let state = Mutex(State())
    /// Serial: the timed syncs run here, one at a time.
    private let queue = DispatchQueue(label: "store-sync")
    /// Held while a sync runs, so two never overlap on one descriptor and a caller's sync waits for a timed one.
    private let syncing = Mutex(())

    init(storePath: String, interval: Duration) {
        self.storePath = storePath
        logPath = storePath + "-wal"
        let slash = storePath.lastIndex(of: "/")
        folderPath = slash.map { String(storePath[..<$0].isEmpty ? "/" : storePath[..<$0]) } ?? "."
        self.interval = interval
    }

    deinit {
        let descriptor = state.withLock { $0.descriptor }
        if descriptor >= 0 { close(descriptor) }
    }

    private enum Next {
        case nothing
        case syncHere
        case arm(after: Duration)
    }

    /// After a commit that was not synced: makes sure a sync follows within the interval. With `mayWait` (the
    /// calling thread may wait for the disk) it syncs here when the last sync began an interval ago or more.
    func committed(mayWait: Bool) {
        let now = ContinuousClock.now
        let next = state.withLock { state -> Next in
            state.unsynced = true
            let since = state.lastSync.map { now - $0 }
            if mayWait, since.map({ $0 >= interval }) ?? true { return .syncHere }
            guard !state.armed else { return .nothing }
            state.armed = true
            // Due an interval after the last sync began (sooner than the contract asks), or after this commit.
            return .arm(after: since.map { max(.zero, interval - $0) } ?? interval)
        }
        switch next {
        case .nothing:
            return
        case .syncHere:
            syncKeepingFailure()
        case .arm(let delay):
            let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { [self] in
                let due = state.withLock { state in
                    state.armed = false
                    return state.unsynced
                }
                if due { syncKeepingFailure() }
            }
        }
    }

    /// Syncs, keeping a failure for the next write to report.
    private func syncKeepingFailure() {
        do throws(HealthStoreError) {
            try syncNow()
        } catch {
            state.withLock { $0.failure = error }
        }
    }

    /// How many syncs have been done (tests).
    var syncCount: Int { state.withLock { $0.syncs } }

    /// Throws (once) what a timed sync failed with, so the next write reports it.
    func takeFailure() throws(HealthStoreError) {
        let failure = state.withLock { state in
            let failure = state.failure
            state.failure = nil
            return failure
        }
        if let failure { throw failure }
    }

    /// Syncs the log now, on the calling thread: every commit made before the call is on the disk when it returns.
    func syncNow() throws(HealthStoreError) {
        try syncing.withLock { _ throws(HealthStoreError) in
            // A commit that ends from here on is not covered: it asks for a sync of its own.
            state.withLock { state in
                state.unsynced = false
                state.lastSync = .now
            }
            let descriptor = try openLog()
            guard descriptor >= 0 else { return }
            if fdatasync(descriptor) != 0 {
                throw failure(errno, doing: "syncing the store's log to the disk")
            }
            state.withLock { $0.syncs += 1 }
        }
    }

    /// The log's descriptor, opened anew (and its folder synced) when the file is new; -1 when there is no log
    /// (nothing was written since the store was opened and the log went away).
    private func openLog() throws(HealthStoreError) -> Int32 {
        var current = stat()
        guard stat(logPath, &current) == 0 else {
            if errno == ENOENT { return -1 }
            throw failure(errno, doing: "finding the store's log")
        }
        let (descriptor, inode) = state.withLock { ($0.descriptor, $0.inode) }
        if descriptor >= 0, inode == current.st_ino { return descriptor }
        if descriptor >= 0 { close(descriptor) }
        let opened = open(logPath, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else { throw failure(errno, doing: "opening the store's log") }
        var status = stat()
        fstat(opened, &status)
        state.withLock {
            $0.descriptor = opened
            $0.inode = status.st_ino
        }
        // A new file's entry in its folder must be on the disk too, or a power cut could take the whole log.
        let folder = open(folderPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            defer { close(folder) }
            if fsync(folder) != 0 { throw failure(errno, doing: "syncing the store's folder to the disk") }
        }
        return opened
    }

    private func failure(_ code: Int32, doing: String) -> HealthStoreError {
        let reason = String(cString: strerror(code))
        if code == ENOSPC || code == EDQUOT {
            return HealthStoreError(
                .diskFull,
                "\(doing) failed: the disk holding \(storePath) is full. Free some space; what was stored before is intact"
            )
        }
        return HealthStoreError(
            .failed,
            "\(doing) for \(storePath) failed: \(reason). The disk may be failing: look for its errors in the kernel's "
                + "log (journalctl -k) and check its health; readings that could not be saved are kept in memory and "
                + "saved once it works again"
        )
    }
}
