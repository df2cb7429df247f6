import Foundation
import GRDB
import SystoleTestSupport
import Testing
import WorkoutKit

@testable import SQLiteStore

/// When commits reach the disk. A power cut itself is the VM's test (scripts/power-cut.sh); these check what the
/// store does for it: which commits are synced, that a timed sync follows a commit without anything else happening,
/// and that a failed sync is reported.
@Suite struct SynchronizationTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func synchronous(_ store: SQLiteHealthStore) async throws -> Int {
        try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    @Test func everyCommitIsSyncedByDefault() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        #expect(try await synchronous(store) == 2)  // FULL
        #expect(store.logSyncCount == nil)
    }

    @Test func aSamplesCommitIsSyncedSoonAfterWithNothingElseHappening() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try SQLiteHealthStore(
            path: folder.path,
            synchronization: .periodically(interval: .milliseconds(50))
        )
        #expect(try await synchronous(store) == 1)  // NORMAL: the commits themselves are not synced
        let atOpen = try #require(store.logSyncCount)
        #expect(atOpen >= 1, "opening syncs what the migrations and a fold of leftovers wrote")

        try await store.save([heartRate(120, at: 0)], workoutID: nil)
        try await waitUntil("a sync after the commit") { store.logSyncCount! > atOpen }
        // After a burst of commits, a sync follows the last of them too.
        for second in 1...20 { try await store.save([heartRate(121, at: Double(second))], workoutID: nil) }
        let afterBurst = store.logSyncCount!
        try await store.save([heartRate(122, at: 21)], workoutID: nil)
        try await waitUntil("a sync after the last commit") { store.logSyncCount! > afterBurst }
        #expect(try await store.samples(of: .heartRate).reduce(0) { $0 + $1.count } == 22)
    }

    @Test func aWorkoutsStateIsSyncedBeforeTheWriteReturns() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        // An interval no test reaches: every sync seen comes from the writes themselves.
        let store = try SQLiteHealthStore(path: folder.path, synchronization: .periodically(interval: .seconds(3600)))
        let before = try #require(store.logSyncCount)
        let journal = runningJournal(.running, startedAt: t0)
        try await store.saveJournal(journal)
        #expect(store.logSyncCount == before + 1)
        try await store.clearJournal(sessionID: journal.sessionID)
        #expect(store.logSyncCount == before + 2)
    }

    @Test func aFailedTimedSyncFailsTheNextSaveAndOnlyThatOne() async throws {
        // The log's folder is a file: finding the log fails with ENOTDIR, as a vanished or broken disk would.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("systole-not-a-folder-\(UUID())").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let sync = LogSync(storePath: file + "/health.sqlite", interval: .milliseconds(10))
        sync.committed(mayWait: false)
        let failure = try await waitFor("the timed sync's failure") { () -> HealthStoreError? in
            do throws(HealthStoreError) {
                try sync.takeFailure()
                return nil
            } catch {
                return error
            }
        }
        #expect(failure.kind == .failed)
        #expect(failure.message.contains("finding the store's log for \(file)/health.sqlite failed: Not a directory"))
        #expect(throws: Never.self) { try sync.takeFailure() }
    }

    @Test func aCommitOnAThreadThatMayWaitSyncsThereOnceAnIntervalHasPassed() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        #expect(FileManager.default.createFile(atPath: folder.path + "-wal", contents: Data([1, 2, 3])))
        let sync = LogSync(storePath: folder.path, interval: .milliseconds(300))
        // The first commit: no sync yet, so it syncs where it is, before returning.
        sync.committed(mayWait: true)
        #expect(sync.syncCount == 1)
        // The next, within the interval: it leaves the sync to the timer, which comes without another commit.
        sync.committed(mayWait: true)
        sync.committed(mayWait: true)
        #expect(sync.syncCount == 1)
        try await waitUntil("the timed sync") { sync.syncCount == 2 }
        // A thread that may not wait never syncs in place, even with no sync before.
        let other = LogSync(storePath: folder.path, interval: .milliseconds(300))
        other.committed(mayWait: false)
        #expect(other.syncCount == 0)
        try await waitUntil("the timed sync") { other.syncCount == 1 }
    }
}
