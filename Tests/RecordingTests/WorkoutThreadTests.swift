import Foundation
import Testing

@testable import Recording

/// The readings' way through the daemon runs on the workout thread: tasks preferring it, and the actors they call
/// (which have no executor of their own), run there and nowhere else.
@Suite struct WorkoutThreadTests {
    /// The name of the calling thread, as ps shows it.
    static func threadName() -> String {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
    }

    actor Recorder {
        var threads: [String] = []
        var order: [Int] = []
        func note(_ index: Int) {
            threads.append(WorkoutThreadTests.threadName())
            order.append(index)
        }
    }

    @Test func tasksPreferringItAndTheActorsTheyCallRunOnTheWorkoutThread() async {
        let recorder = Recorder()
        await withTaskExecutorPreference(WorkoutThread.shared) {
            #expect(Self.threadName() == "workout")
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        #expect(Self.threadName() == "workout")
                        await recorder.note(index)
                    }
                }
            }
        }
        #expect(await Set(recorder.threads) == ["workout"])
        #expect(await recorder.order.count == 100)
        // Without the preference, the same actor runs on Swift's pool.
        await Task.detached { await recorder.note(100) }.value
        #expect(await recorder.threads.last != "workout")
    }
}
