import Foundation
import LiveFeed

/// The MQTT messages of a ``LiveStatus``: one state message per sensor and one for the workout, and the Home
/// Assistant discovery configs that make each sensor and the workout a device with its entities, without YAML.
/// Heart rate is only in them when the status carries it (privacy); then its entities are also withdrawn.
struct LiveMessages {
    let settings: MQTTSettings

    /// A sensor's id in topics and unique ids: its address in lower-case hex without colons.
    static func id(of address: String) -> String {
        address.lowercased().filter { $0.isHexDigit }
    }

    func sensorTopic(_ id: String) -> String { "\(settings.topicPrefix)/sensor/\(id)" }
    var workoutTopic: String { "\(settings.topicPrefix)/workout" }
    /// The device every entity of the workout belongs to, one per systoled.
    var workoutDeviceID: String {
        "systole_" + String(settings.clientID.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// The live values: each sensor with an address, and the workout. Written by hand (``JSONObject``): with a
    /// hundred sensors they are a hundred objects a second, and JSONSerialization cost more than the rest of
    /// the publisher together.
    func states(_ status: LiveStatus) -> [MQTTMessage] {
        var messages: [MQTTMessage] = []
        messages.reserveCapacity(status.sensors.count + 1)
        for sensor in status.sensors {
            guard let address = sensor.address else { continue }
            var object = JSONObject()
            object.add("battery", sensor.battery)
            object.add("connected", sensor.connected ? "ON" : "OFF")
            object.add("contact", sensor.contact)
            if status.showsHeartRate { object.add("heart_rate", sensor.connected ? sensor.bpm : nil) }
            object.add("state", sensor.state)
            messages.append(MQTTMessage(topic: sensorTopic(Self.id(of: address)), text: object.text))
        }
        var workout = JSONObject()
        workout.add("activity", status.activity)
        workout.add("elapsed", status.elapsed.isFinite ? (status.elapsed * 10).rounded() / 10 : 0)
        if status.showsHeartRate {
            workout.add("heart_rate", status.heartRate?.bpm)
            workout.add("zone", status.heartRate?.zone)
        }
        workout.add("state", status.state)
        messages.append(MQTTMessage(topic: workoutTopic, text: workout.text))
        return messages
    }

    /// One entity of a discovery config.
    private struct Entity {
        var component: String
        var key: String
        var name: String
        var extra: [String: Any]
        var isHeartRate = false
    }

    /// A sensor's and the workout's heart rate alike.
    private static func heartRateEntity() -> Entity {
        Entity(
            component: "sensor",
            key: "heart_rate",
            name: "Heart rate",
            extra: ["unit_of_measurement": "bpm", "state_class": "measurement", "icon": "mdi:heart-pulse"],
            isHeartRate: true
        )
    }

    private static func sensorEntities() -> [Entity] {
        [
            heartRateEntity(),
            Entity(
                component: "sensor",
                key: "battery",
                name: "Battery",
                extra: [
                    "device_class": "battery", "unit_of_measurement": "%", "state_class": "measurement",
                    "entity_category": "diagnostic",
                ]
            ),
            Entity(
                component: "binary_sensor",
                key: "connected",
                name: "Connected",
                extra: ["device_class": "connectivity", "payload_on": "ON", "payload_off": "OFF"]
            ),
            Entity(component: "sensor", key: "contact", name: "Skin contact", extra: ["icon": "mdi:hand-back-right"]),
            Entity(component: "sensor", key: "state", name: "State", extra: ["entity_category": "diagnostic"]),
        ]
    }

    private static func workoutEntities() -> [Entity] {
        [
            Entity(component: "sensor", key: "state", name: "Workout state", extra: ["icon": "mdi:run"]),
            Entity(
                component: "sensor",
                key: "elapsed",
                name: "Workout elapsed time",
                extra: ["device_class": "duration", "unit_of_measurement": "s", "state_class": "measurement"]
            ),
            heartRateEntity(),
            Entity(
                component: "sensor",
                key: "zone",
                name: "Heart-rate zone",
                extra: ["icon": "mdi:speedometer"],
                isHeartRate: true
            ),
        ]
    }

    /// The discovery configs of one sensor (retained). With heart rate hidden, its entity's config is published
    /// empty, which removes an entity an earlier configuration announced.
    func discovery(of sensor: LiveSensor, showsHeartRate: Bool) -> [MQTTMessage] {
        guard let address = sensor.address else { return [] }
        let id = Self.id(of: address)
        var device: [String: Any] = [
            "identifiers": ["systole_\(id)"],
            "name": sensor.name ?? "Heart-rate sensor \(address)",
            "model": "Bluetooth LE heart-rate sensor",
            "connections": [["bluetooth", address]],
            "via_device": workoutDeviceID,
        ]
        if let manufacturer = sensor.manufacturer { device["manufacturer"] = manufacturer }
        return Self.sensorEntities().map { entity in
            config(entity, objectID: "systole_\(id)", state: sensorTopic(id), device: device, shown: showsHeartRate)
        }
    }

    /// The workout device's discovery configs (retained).
    func workoutDiscovery(showsHeartRate: Bool) -> [MQTTMessage] {
        let device: [String: Any] = [
            "identifiers": [workoutDeviceID],
            "name": "systole (\(settings.clientID))",
            "manufacturer": "systole",
            "model": "systoled",
        ]
        return Self.workoutEntities().map { entity in
            config(entity, objectID: workoutDeviceID, state: workoutTopic, device: device, shown: showsHeartRate)
        }
    }

    private func config(
        _ entity: Entity,
        objectID: String,
        state: String,
        device: [String: Any],
        shown showsHeartRate: Bool
    ) -> MQTTMessage {
        let topic = "\(settings.discoveryPrefix)/\(entity.component)/\(objectID)/\(entity.key)/config"
        guard showsHeartRate || !entity.isHeartRate else {
            return MQTTMessage(topic: topic, payload: [], qos: 1, retain: true)
        }
        var values: [String: Any] = [
            "name": entity.name,
            "unique_id": "\(objectID)_\(entity.key)",
            "state_topic": state,
            "value_template": "{{ value_json.\(entity.key) }}",
            "availability_topic": settings.availabilityTopic,
            "device": device,
        ]
        values.merge(entity.extra) { $1 }
        return MQTTMessage(topic: topic, payload: Self.json(values), qos: 1, retain: true)
    }

    static func json(_ values: [String: Any]) -> [UInt8] {
        // Only strings, numbers, null and arrays of them: serialization cannot fail.
        let data =
            (try? JSONSerialization.data(withJSONObject: values, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return Array(data)
    }
}
