import Foundation
import GRDB
import Synchronization
import SystoleTestSupport
import Testing
import WorkoutKit

@testable import SQLiteStore

#if canImport(Glibc)
import Glibc
#endif

/// Notes the thread each commit of the writer connection ran on.
private final class CommitThreads: TransactionObserver, Sendable {
    let threads = Mutex<[pthread_t]>([])
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidCommit(_ db: Database) { threads.withLock { $0.append(pthread_self()) } }
    func databaseDidRollback(_ db: Database) {}
}

/// A thread of the test's own that runs the saving task, so the saving thread is never one GRDB's queue could use.
private final class OwnThread: TaskExecutor, @unchecked Sendable {
    private let jobs = Mutex<[UnownedJob]>([])
    private let ready = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [unowned self] in
            while true {
                ready.wait()
                for job in jobs.withLock({ jobs in
                    defer { jobs = [] }
                    return jobs
                }) {
                    job.runSynchronously(on: asUnownedTaskExecutor())
                }
            }
        }
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        ready.signal()
    }
}

@Suite struct CommitInPlaceTests {
    private static let thread = OwnThread()

    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// Saves three batches; returns the threads that asked whether to commit in place and those the commits ran on.
    func commits(inPlace: Bool) async throws -> (asked: [pthread_t], committed: [pthread_t], saved: [Sample]) {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let asked = Mutex<[pthread_t]>([])
        let store = try SQLiteHealthStore(
            path: folder.path,
            commitsInPlace: {
                asked.withLock { $0.append(pthread_self()) }
                return inPlace
            }
        )
        let observer = CommitThreads()
        store.pool.add(transactionObserver: observer, extent: .databaseLifetime)
        let workoutID = UUID()
        for index in 0..<3 {
            try await store.save([heartRate(100 + Double(index), at: Double(index))], workoutID: workoutID)
        }
        let committed = observer.threads.withLock { $0 }
        return (asked.withLock { $0 }, committed, try await store.samples(ofWorkout: workoutID))
    }

    @Test func aStoreAllowedToCommitInPlaceCommitsOnTheSavingThread() async throws {
        let (asked, committed, saved) = try await commits(inPlace: true)
        #expect(asked.count == 3)
        #expect(committed.count == 3)
        for (caller, commit) in zip(asked, committed) { #expect(pthread_equal(caller, commit) != 0) }
        #expect(
            saved.compactMap { if case .quantity(let q) = $0 { q.quantity.value } else { nil } } == [100, 101, 102]
        )
    }

    @Test func otherwiseTheCommitRunsOnTheWritersQueueAndTheSavingThreadIsFree() async throws {
        let (asked, committed, saved) = try await commits(inPlace: false)
        #expect(asked.count == 3)
        #expect(committed.count == 3)
        for (caller, commit) in zip(asked, committed) { #expect(pthread_equal(caller, commit) == 0) }
        #expect(saved.count == 3)
    }
}
