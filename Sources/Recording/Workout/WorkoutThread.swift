import DBus
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One thread that runs a reading's whole way through the daemon: the workout manager, data source, builder,
/// session, the store's group-commit writer and the live log, all preferring it as their task executor
/// (actors without an executor of their own run on their caller's preferred one).
///
/// On Swift's global executor each hop of a tick's readings from one of those actors to the next woke another
/// pool thread, about fifteen sleeps and wakeups per (then 50 ms) tick, a fifth of the daemon's CPU with a hundred
/// sensors. Here the next job waits in this thread's queue while the current one runs, and the thread sleeps
/// only when the queue is empty. The store commits in place here (``isCurrent``): a commit's wait for the disk holds
/// this thread only, which has nothing else to do meanwhile, instead of two switches to GRDB's queue and back.
package final class WorkoutThread: TaskExecutor, @unchecked Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var sleeping = false
    }
    private let queue = Mutex(Queue())
    /// The thread sleeps on this when its queue is empty; `enqueue` posts it then.
    private let wakeup: UnsafeMutablePointer<sem_t>

    /// The process's one workout thread, started when first used.
    package static let shared = WorkoutThread()

    /// Whether the caller runs on the workout thread.
    package static var isCurrent: Bool { pthread_equal(pthread_self(), shared.thread) != 0 }

    /// Written once in `init`, before `shared` is visible to any other thread.
    private var thread = pthread_t()

    private init() {
        wakeup = .allocate(capacity: 1)
        sem_init(wakeup, 0, 0)
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let result = pthread_create(
            &thread,
            nil,
            { raw in
                Unmanaged<WorkoutThread>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            },
            box.toOpaque()
        )
        precondition(
            result == 0,
            "systoled cannot start its workout thread (pthread_create: \(String(cString: strerror(result)))): the "
                + "system refused this process another thread; raise its limits (TasksMax= in the unit, ulimit -u) "
                + "or free memory, and start it again"
        )
        pthread_detach(thread)
        self.thread = thread
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let wake = queue.withLock { queue in
            queue.jobs.append(unowned)
            defer { queue.sleeping = false }
            return queue.sleeping
        }
        if wake { sem_post(wakeup) }
    }

    /// Runs jobs in the order they came, taking everything queued at each turn, for as long as the process lives.
    private func run() {
        nameCurrentThread("workout")
        var batch: [UnownedJob] = []
        while true {
            let sleep = queue.withLock { queue in
                swap(&batch, &queue.jobs)
                queue.sleeping = batch.isEmpty
                return queue.sleeping
            }
            if sleep {
                while sem_wait(wakeup) != 0 && errno == EINTR {}
                continue
            }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
