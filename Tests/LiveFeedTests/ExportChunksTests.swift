import Foundation
import LiveFeed
import SystoleTestSupport
import Testing

/// The hand-over between an export's thread and its reader: the maker waits while `capacity` chunks wait, the
/// reader gets every chunk in order and then the end, and a reader that goes away or stalls stops the maker.
struct ExportChunksTests {
    /// Runs `body` on a thread of its own (the maker may wait) and returns its result.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test func everyChunkArrivesInOrderThenTheEnd() async throws {
        let chunks = ExportChunks(capacity: 2)
        async let made: Bool = Self.onThread {
            do {
                for index in 0..<50 { try chunks.send([UInt8(index)], timeout: .seconds(60)) }
                chunks.finish()
                return true
            } catch {
                return false
            }
        }
        var received: [UInt8] = []
        for try await chunk in chunks { received += chunk }
        #expect(received == (0..<50).map(UInt8.init))
        #expect(await made)
    }

    @Test func theMakerWaitsForRoomAndAReaderThatLeavesStopsIt() async throws {
        let chunks = ExportChunks(capacity: 2)
        let sent = Counter()
        async let outcome: String = Self.onThread {
            do {
                while true {
                    try chunks.send([0], timeout: .seconds(60))
                    sent.increment()
                }
            } catch {
                return "\(error)"
            }
        }
        // Nobody reads: two chunks wait, the third send waits for room.
        try await waitUntil("two chunks waiting") { sent.value == 2 }
        #expect(sent.value == 2)
        chunks.abandon()
        #expect(await outcome.contains("went away"))
        #expect(sent.value == 2)
    }

    @Test func aReaderThatTakesNothingIsGivenUp() async {
        let chunks = ExportChunks(capacity: 1)
        let outcome: String = await Self.onThread {
            do {
                try chunks.send([0], timeout: .milliseconds(10))
                try chunks.send([1], timeout: .milliseconds(10))
                return "both sent"
            } catch {
                return "\(error)"
            }
        }
        #expect(outcome.contains("took nothing"), "\(outcome)")
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var value: Int { lock.withLock { count } }
        func increment() { lock.withLock { count += 1 } }
    }
}
