import BlueZ
import BlueZSimulator
import Foundation
import HeartRateProfile
import HeartRateSensors
import SystoleTestSupport
import Testing

/// A reconnect loses nothing, on either path. On signals, bluetoothd resumes a StartNotify session by itself as soon
/// as the link is back (the simulator does too: from Connected, before ServicesResolved), so the strap's first
/// notifications arrive before the sensor has subscribed again. On AcquireNotify the socket ends with the link and
/// the strap sends nothing until the sensor acquires a new one (bluetoothd 5.66 subscribes no acquired client again
/// by itself; an unbonded strap forgets its subscription with the link).
@Suite struct ReconnectLossTests {
    /// When the test took the strap out of range, each time.
    actor Drops {
        var dates: [Date] = []
        var readingsAtLastDrop = 0
        func record(_ date: Date, readings: Int) {
            dates.append(date)
            readingsAtLastDrop = readings
        }
    }

    @Test(arguments: [NotifyMethod.signal, .acquire])
    func everyNotificationSentAfterTheLinkIsBackIsRead(method: NotifyMethod) async throws {
        // 10 Hz: bluetoothd's resumed session sends about one notification before the services resolve.
        try await withSimulator(scenario(.polarH10, rate: 10)) { bt in
            var options = fastOptions()
            options.staleIntervals = 1_000
            options.notify = method
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: options,
                delegate: HeartRateSensorEventStream()
            )
            let simulator = bt.simulator
            let drops = Drops()
            let events = await collect(sensor) { events in
                let readings = events.readings.count
                let dropped = await drops.dates.count
                // Three drops, each once the connection before it has brought 10 readings.
                if readings >= (await drops.readingsAtLastDrop) + 10, dropped < 3,
                    events.streamingConnections == dropped + 1
                {
                    await simulator.takeOutOfRange(sensor: 0, for: .seconds(1.5))
                    await drops.record(Date(), readings: readings)
                    return false
                }
                return dropped == 3 && events.streamingConnections == 4
                    && events.sinceLastConnection.readings.count >= 10
            }
            let boundaries = await drops.dates
            try #require(boundaries.count == 3, "\(events.states)")
            let sent = await simulator.emittedNotifications()
            // What was sent over each link: between the drops.
            var sentPerLink: [[HeartRateMeasurement]] = Array(repeating: [], count: 4)
            for notification in sent {
                let link = boundaries.firstIndex { notification.date < $0 } ?? 3
                sentPerLink[link].append(try HeartRateMeasurement(decoding: notification.payload))
            }
            // What was read of each: from each time the sensor began streaming (a link's first notifications are
            // read after that report, the resumed ones among them).
            var readPerLink: [[HeartRateMeasurement]] = []
            for event in events {
                switch event {
                case .state(.streaming): readPerLink.append([])
                case .reading(let reading) where !readPerLink.isEmpty:
                    readPerLink[readPerLink.count - 1].append(reading.measurement)
                default: break
                }
            }
            try #require(readPerLink.count == 4, "\(events.states)")
            func heartRates(_ measurements: [HeartRateMeasurement]) -> [UInt16] { measurements.map(\.heartRate) }
            for link in 0..<3 {
                #expect(
                    heartRates(readPerLink[link]) == heartRates(sentPerLink[link]),
                    "link \(link + 1): read \(readPerLink[link].count) of the \(sentPerLink[link].count) sent"
                )
            }
            // The last link was still up when the test stopped: what was read is what was sent first.
            #expect(
                heartRates(readPerLink[3]) == Array(heartRates(sentPerLink[3]).prefix(readPerLink[3].count)),
                "last link: read \(readPerLink[3].count), sent \(sentPerLink[3].count)"
            )
        }
    }
}
