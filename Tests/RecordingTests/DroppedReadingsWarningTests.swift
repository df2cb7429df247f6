import Logging
import Synchronization
import Testing

@testable import Recording

@Suite struct DroppedReadingsWarningTests {
    @Test func readingsDroppedBeforeTheWorkoutAreLoggedOnceWithTheirCount() {
        let lines = CollectedLog()
        let logger = Logger(label: "test") { _ in lines }
        let readings = Mailbox<Int>(limit: 4)
        readings.put(contentsOf: 0..<10)

        RecordingPipeline.warnOfDroppedReadings(in: readings, logger: logger)
        RecordingPipeline.warnOfDroppedReadings(in: readings, logger: logger)

        let logged = lines.entries
        #expect(logged.count == 1)
        #expect(logged.first?.level == .warning)
        #expect(logged.first?.message.hasPrefix("6 readings were dropped: more than 4 arrived") == true)
        #expect(logged.first?.message.contains("slow or stalled disk") == true)
        #expect(logged.first?.message.contains("Check the disk that holds the store") == true)
    }

    @Test func nothingIsLoggedWhileNothingWasDropped() {
        let lines = CollectedLog()
        let readings = Mailbox<Int>(limit: 4)
        readings.put(contentsOf: 0..<4)
        RecordingPipeline.warnOfDroppedReadings(in: readings, logger: Logger(label: "test") { _ in lines })
        #expect(lines.entries.isEmpty)
    }
}

/// A log handler that keeps what it is given.
private struct CollectedLog: LogHandler {
    private let store = Store()
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var entries: [(level: Logger.Level, message: String)] { store.entries.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.entries.withLock { $0.append((event.level, "\(event.message)")) }
    }

    private final class Store: Sendable {
        let entries = Mutex<[(level: Logger.Level, message: String)]>([])
    }
}
