import BlueZ
import HeartRateSensors
import Testing

/// Runs a sensor and gathers its events until `stop` says enough (or the timeout passes, which only a real failure
/// reaches), then stops the sensor and gathers what it still reported, so counters and events agree.
func collect(
    _ sensor: HeartRateSensor,
    timeout: Duration = .seconds(60),
    until stop: @escaping @Sendable ([HeartRateSensorEvent]) async -> Bool
) async -> [HeartRateSensorEvent] {
    let runner = Task { await sensor.run() }
    let timer = Task {
        try? await Task.sleep(for: timeout)
        runner.cancel()
    }
    var events: [HeartRateSensorEvent] = []
    var stopped = false
    guard let stream = sensor.delegate as? HeartRateSensorEventStream else {
        Issue.record("collect(_:) reads a sensor made with a HeartRateSensorEventStream as its delegate")
        return []
    }
    for await event in stream.events {
        events.append(event)
        if !stopped, await stop(events) {
            stopped = true
            runner.cancel()
        }
    }
    timer.cancel()
    return events
}

extension [HeartRateSensorEvent] {
    var readings: [HeartRateReading] {
        compactMap { if case .reading(let reading) = $0 { reading } else { nil } }
    }
    var states: [SensorConnectionState] {
        compactMap { if case .state(let state) = $0 { state } else { nil } }
    }
    func count(of state: SensorConnectionState) -> Int { states.filter { $0 == state }.count }

    /// How many connections reached streaming. A sensor that was stale and speaks again is also reported
    /// `.streaming` (it is not a new connection), which a loaded test machine can cause at any time.
    var streamingConnections: Int {
        zip([nil] + states, states).filter { previous, state in state == .streaming && previous != .stale }.count
    }

    /// The events after the sensor was first reported stale (none when it never was).
    var afterFirstStale: [HeartRateSensorEvent] {
        guard let stale = firstIndex(where: { if case .state(.stale) = $0 { true } else { false } }) else { return [] }
        return Array(self[(stale + 1)...])
    }

    /// The events after the last connection started resolving services.
    var sinceLastConnection: [HeartRateSensorEvent] {
        guard let start = lastIndex(where: { if case .state(.resolvingServices) = $0 { true } else { false } })
        else { return [] }
        return Array(self[(start + 1)...])
    }
}

/// Options that reconnect fast, so tests of reconnection do not wait long.
func fastOptions() -> HeartRateSensor.Options {
    var options = HeartRateSensor.Options()
    options.initialReconnectDelay = .milliseconds(200)
    options.maximumReconnectDelay = .seconds(1)
    options.discoveryTimeout = .seconds(3)
    return options
}
