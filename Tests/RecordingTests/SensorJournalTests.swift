import BlueZ
import HeartRateSensors
import Testing

@testable import Recording

@Suite struct SensorJournalTests {
    static let away = "no sensor matching any heart-rate sensor found within 10.0 seconds on hci0"

    /// One attempt of a sensor that is not there: what the sensor reports, in order.
    static func attempt(_ number: Int, failing reason: String = away) -> [SensorConnectionState] {
        [
            .searching(adapters: ["hci0"]), .disconnected(reason: reason),
            .waitingToReconnect(attempt: number, delay: .seconds(min(30, 1 << (number - 1)))),
        ]
    }

    @Test func aSensorThatStaysAwayIsLoggedOnceUntilItStreams() throws {
        var journal = SensorJournal()
        var lines: [String] = []
        for number in 1...20 {
            lines += Self.attempt(number).compactMap { journal.line(for: $0) }
        }
        // The first attempt in full; the nineteen identical ones after it add nothing.
        #expect(lines.count == 3, "\(lines)")
        #expect(lines[0] == "searching on hci0")
        #expect(lines[1].hasPrefix("disconnected: \(Self.away)"))
        #expect(lines[1].contains("not logged"))
        #expect(lines[2] == "reconnecting in 1.0 seconds (attempt 1)")
        let address = try BluetoothAddress("00:AA:01:00:00:00")
        let back = [SensorConnectionState.connecting(address, adapter: "hci0"), .resolvingServices, .streaming]
        let resumed = back.compactMap { journal.line(for: $0) }
        #expect(resumed == ["streaming (after 20 failed attempts)"])
        // Streaming again: the next drop is news, and logged in full.
        let dropped =
            [SensorConnectionState.disconnected(reason: "the sensor disconnected")]
            + [.waitingToReconnect(attempt: 1, delay: .seconds(1)), .connecting(address, adapter: "hci0")]
        #expect(dropped.compactMap { journal.line(for: $0) }.count == 2)
        #expect(journal.line(for: .streaming) == "streaming")
    }

    @Test func aDifferentFailureIsLoggedWithHowOftenTheOneBeforeRepeated() {
        var journal = SensorJournal()
        var lines: [String] = []
        for number in 1...4 { lines += Self.attempt(number).compactMap { journal.line(for: $0) } }
        #expect(lines.count == 3)
        let refused = "org.bluez.Error.Failed: le-connection-abort-by-local"
        let other = Self.attempt(5, failing: refused).compactMap { journal.line(for: $0) }
        #expect(other.count == 2, "\(other)")
        #expect(other[0].hasPrefix("disconnected: \(refused)"))
        #expect(other[0].contains("the failure before it repeated 3 times"), "\(other[0])")
        #expect(other[1].hasPrefix("reconnecting in"))
        // A stale sensor is always news.
        #expect(journal.line(for: .stale) == "stale")
    }
}
