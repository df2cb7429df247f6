import DBus
import Foundation

/// Faults played at a moment of the caller's choosing rather than at scenario times: a test waits until what it
/// checks is in place (a workout running, a client subscribed) and then plays the fault, so a busy machine that is
/// slow to get there cannot make the fault come too early.
extension BlueZSimulator {
    /// Takes sensor `index` out of radio range now, for `duration`: the link drops at once and Connect() fails
    /// until it is back.
    public func takeOutOfRange(sensor index: Int, for duration: Duration) {
        sensors[index].behaviour.add(Scenario.FaultSpec(.disconnect, at: now, for: duration.seconds))
        sensors[index].inRange = false
        if let path = sensors[index].connectedVia { linkLost(path) }
    }

    /// Loses sensor `index`'s notifications in the air from now, for `duration`.
    public func dropNotifications(sensor index: Int, for duration: Duration) {
        sensors[index].behaviour.add(Scenario.FaultSpec(.drop, at: now, for: duration.seconds))
    }

    /// Plays `fault` on sensor `index`, its `at` counted from now instead of from the start; checked as a scenario's
    /// faults are. Returns the fault as scheduled on the scenario's clock.
    @discardableResult
    public func play(_ fault: Scenario.FaultSpec, sensor index: Int) throws -> Scenario.FaultSpec {
        guard sensors.indices.contains(index) else {
            throw Scenario.Invalid(description: "no sensor \(index): the scenario has \(sensors.count)")
        }
        var scheduled = fault
        scheduled.at = now + max(0, fault.at)
        // The sensor's clock sleeps until its next notification and then follows the storm's grid from there: the
        // storm starts with that notification, so that every one of its grid is played.
        if fault.kind == .storm { scheduled.at = max(scheduled.at, sensors[index].nextDue) }
        var check = scenario
        var spec = sensors[index].spec
        spec.count = 1
        // The ATT MTU was settled when the sensor was made: a storm played now must fit it.
        spec.mtu = spec.effectiveMTU
        spec.faults = [scheduled]
        check.sensors = [spec]
        try check.validate()
        sensors[index].behaviour.add(scheduled)
        if scheduled.kind == .flap {
            tasks.append(Task { [weak self] () -> Void in await self?.runFlap(scheduled, sensor: index) })
        }
        return scheduled
    }

    /// The index of the sensor with `address` (any case), if there is one.
    public func sensorIndex(address: String) -> Int? {
        sensors.firstIndex { $0.address == address.uppercased() }
    }

    /// Plays a fault given as a scenario's JSON fault object on the sensor with `address`, from now.
    func playFault(address: String, json: String) throws(DBusError) {
        guard let index = sensorIndex(address: address) else {
            throw DBusError(.invalidArgs, "no simulated sensor has the address '\(address)'")
        }
        do {
            let fault = try JSONDecoder().decode(Scenario.FaultSpec.self, from: Data(json.utf8))
            try play(fault, sensor: index)
        } catch {
            throw DBusError(.invalidArgs, "not a fault: \(error)")
        }
    }
}
