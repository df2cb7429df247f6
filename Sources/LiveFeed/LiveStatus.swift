import Foundation

/// What the live outputs (the web page, the overlay, MQTT, /metrics) show of the moment: the workout, the latest
/// heart rate with its zone, and each sensor. systoled builds it with the privacy setting already applied, so an
/// output cannot show what the setting hides.
public struct LiveStatus: Codable, Sendable, Equatable {
    /// `idle` without a workout, else the session's state: `prepared`, `running`, `paused`, `stopped`, `ended`.
    public var state: String
    public var workoutID: String?
    /// The activity's name, like `running`.
    public var activity: String?
    /// When the workout started, in seconds since 1970.
    public var start: Double?
    /// The workout's elapsed time in seconds without pauses, as of ``at``.
    public var elapsed: Double
    /// When this status was taken, in seconds since 1970 (a page moves the elapsed time on from here).
    public var at: Double
    /// The latest heart rate; nil without one or when privacy hides it.
    public var heartRate: LiveHeartRate?
    /// The workout's heart rate so far (average and maximum); nil when privacy hides it.
    public var average: Double?
    public var maximum: Double?
    public var sensors: [LiveSensor]
    /// False when `privacy = "duration-only"`: no heart rate anywhere.
    public var showsHeartRate: Bool

    public init(
        state: String,
        workoutID: String? = nil,
        activity: String? = nil,
        start: Double? = nil,
        elapsed: Double = 0,
        at: Double,
        heartRate: LiveHeartRate? = nil,
        average: Double? = nil,
        maximum: Double? = nil,
        sensors: [LiveSensor] = [],
        showsHeartRate: Bool = true
    ) {
        self.state = state
        self.workoutID = workoutID
        self.activity = activity
        self.start = start
        self.elapsed = elapsed
        self.at = at
        self.heartRate = heartRate
        self.average = average
        self.maximum = maximum
        self.sensors = sensors
        self.showsHeartRate = showsHeartRate
    }

    /// The status as JSON, with the keys and values its `Codable` conformance gives (nil values left out), written
    /// by hand: the page's event stream sends it every second, with every sensor.
    public var json: String {
        var object = JSONObject()
        object.add("state", state)
        object.addIfPresent("workoutID", workoutID)
        object.addIfPresent("activity", activity)
        object.addIfPresent("start", start)
        object.add("elapsed", elapsed)
        object.add("at", at)
        if let heartRate {
            var rate = JSONObject()
            rate.add("bpm", heartRate.bpm)
            rate.add("sensor", heartRate.sensor)
            rate.add("zone", heartRate.zone)
            rate.add("colour", heartRate.colour)
            object.add("heartRate", json: rate.text)
        }
        object.addIfPresent("average", average)
        object.addIfPresent("maximum", maximum)
        let sensors = sensors.map { sensor in
            var entry = JSONObject()
            entry.addIfPresent("address", sensor.address)
            entry.addIfPresent("name", sensor.name)
            entry.addIfPresent("manufacturer", sensor.manufacturer)
            entry.add("state", sensor.state)
            entry.add("connected", sensor.connected)
            entry.addIfPresent("battery", sensor.battery)
            entry.addIfPresent("contact", sensor.contact)
            entry.addIfPresent("bpm", sensor.bpm)
            return entry
        }
        object.add("sensors", json: JSONObject.array(sensors))
        object.add("showsHeartRate", showsHeartRate)
        return object.text
    }

    /// The status without any heart rate: what `privacy = "duration-only"` leaves.
    public func withoutHeartRate() -> LiveStatus {
        var status = self
        status.heartRate = nil
        status.average = nil
        status.maximum = nil
        status.sensors = sensors.map { sensor in
            var sensor = sensor
            sensor.bpm = nil
            return sensor
        }
        status.showsHeartRate = false
        return status
    }
}

/// The latest heart rate and where it came from.
public struct LiveHeartRate: Codable, Sendable, Equatable {
    public var bpm: Int
    /// The sensor's address.
    public var sensor: String
    /// Its zone (1–5), 0 below zone 1.
    public var zone: Int
    /// The zone's colour, as CSS takes it (`#2e7d32`).
    public var colour: String

    public init(bpm: Int, sensor: String, zone: Int) {
        self.bpm = bpm
        self.sensor = sensor
        self.zone = zone
        colour = ZoneColour.css(zone)
    }
}

/// One configured sensor as the live outputs show it.
public struct LiveSensor: Codable, Sendable, Equatable {
    /// Its Bluetooth address; nil for an `any` entry that has not found a sensor yet.
    public var address: String?
    /// The name it advertises, cleaned (systoled never shows a device's control characters).
    public var name: String?
    public var manufacturer: String?
    /// `streaming`, `stale`, `searching`, `connecting`, …
    public var state: String
    public var connected: Bool
    public var battery: Int?
    /// `detected`, `not detected` or `not supported`.
    public var contact: String?
    public var bpm: Int?

    public init(
        address: String?,
        name: String? = nil,
        manufacturer: String? = nil,
        state: String,
        connected: Bool,
        battery: Int? = nil,
        contact: String? = nil,
        bpm: Int? = nil
    ) {
        self.address = address
        self.name = name
        self.manufacturer = manufacturer
        self.state = state
        self.connected = connected
        self.battery = battery
        self.contact = contact
        self.bpm = bpm
    }
}

/// The colours the five heart-rate zones are shown in: grey, blue, green, orange, red, as Garmin and Polar show
/// them, so a glance at a second screen tells the zone.
public enum ZoneColour {
    /// CSS colours for zones 0 (below zone 1) to 5.
    public static let all = ["#9e9e9e", "#78909c", "#1e88e5", "#43a047", "#fb8c00", "#e53935"]

    public static func css(_ zone: Int) -> String { all[min(max(zone, 0), all.count - 1)] }
}
