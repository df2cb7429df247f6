import Dispatch
import Foundation

/// An export's bytes as they are made on a thread of their own, handed to an asynchronous reader (an HTTP
/// response) a chunk at a time. At most ``capacity`` chunks wait: the maker waits while the reader is behind, and
/// gives up when the reader takes nothing for its timeout or went away (``abandon()``).
public final class ExportChunks: AsyncSequence, @unchecked Sendable {
    public typealias Element = [UInt8]

    /// Why the maker stopped: the reader went away or took nothing for too long.
    public struct Abandoned: Error, CustomStringConvertible {
        public var description: String
    }

    /// How many chunks may wait for the reader.
    public let capacity: Int
    private let room: DispatchSemaphore
    private let lock = NSLock()
    private var queued: [[UInt8]] = []
    private var end: Result<Void, any Error>?
    private var waiting: CheckedContinuation<[UInt8]?, any Error>?
    private var abandoned = false

    public init(capacity: Int = 4) {
        self.capacity = capacity
        // Made empty and filled, not made with the capacity: libdispatch traps when a semaphore is released below
        // the value it was made with, as one is here when the reader goes away with chunks waiting.
        room = DispatchSemaphore(value: 0)
        for _ in 0..<capacity { room.signal() }
    }

    // MARK: The maker's side (a thread that may wait)

    /// Hands over `chunk`, waiting up to `timeout` for room; throws ``Abandoned`` when the reader is gone or slow.
    public func send(_ chunk: [UInt8], timeout: Duration) throws {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        guard room.wait(timeout: .now() + seconds) == .success else {
            throw Abandoned(description: "the reader took nothing for \(timeout) and was given up")
        }
        lock.lock()
        guard !abandoned else {
            lock.unlock()
            throw Abandoned(description: "the reader went away before the file was written")
        }
        if let waiting {
            self.waiting = nil
            lock.unlock()
            room.signal()
            waiting.resume(returning: chunk)
        } else {
            queued.append(chunk)
            lock.unlock()
        }
    }

    /// Ends the bytes: the reader gets what is queued, then the end (or `error`).
    public func finish(throwing error: (any Error)? = nil) {
        lock.lock()
        guard end == nil else {
            lock.unlock()
            return
        }
        end = error.map { .failure($0) } ?? .success(())
        let waiting = queued.isEmpty ? self.waiting : nil
        if waiting != nil { self.waiting = nil }
        lock.unlock()
        if let waiting {
            if let error { waiting.resume(throwing: error) } else { waiting.resume(returning: nil) }
        }
    }

    // MARK: The reader's side

    /// The next chunk, nil at the end.
    func next() async throws -> [UInt8]? {
        try await withCheckedThrowingContinuation { continuation in
            lock.lock()
            if !queued.isEmpty {
                let chunk = queued.removeFirst()
                lock.unlock()
                room.signal()
                continuation.resume(returning: chunk)
            } else if let end {
                lock.unlock()
                continuation.resume(with: end.map { nil })
            } else {
                waiting = continuation
                lock.unlock()
            }
        }
    }

    /// The reader is gone: the maker's next ``send(_:timeout:)`` throws instead of waiting.
    public func abandon() {
        lock.lock()
        abandoned = true
        queued = []
        lock.unlock()
        room.signal()
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: ExportChunks
        public mutating func next() async throws -> [UInt8]? { try await chunks.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self) }
}
