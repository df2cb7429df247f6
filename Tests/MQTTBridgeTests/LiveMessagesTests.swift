import Foundation
import LiveFeed
import Testing

@testable import MQTTBridge

@Suite struct LiveMessagesTests {
    static let messages = LiveMessages(settings: MQTTSettings(host: "h", port: 1883, clientID: "gym-1"))

    static func object(_ message: MQTTMessage) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
    }

    /// A device in range chooses its name: quotes, backslashes, braces and escape sequences stay inside the JSON
    /// string, and Home Assistant gets the name exactly.
    @Test func aHostileNameStaysAStringInTheDiscoveryConfig() throws {
        let name = "\"},\"name\":\"x\\\u{1B}[31m{{ 7*7 }}<script>"
        let sensor = LiveSensor(address: "A0:9E:1A:94:8D:23", name: name, state: "streaming", connected: true, bpm: 90)
        let configs = Self.messages.discovery(of: sensor, showsHeartRate: true)
        #expect(configs.count == 5)
        for config in configs {
            #expect(config.retain && config.qos == 1)
            #expect(config.topic.hasPrefix("homeassistant/"))
            #expect(!config.topic.contains("+") && !config.topic.contains("#"))
            let object = try Self.object(config)
            #expect((object["device"] as? [String: Any])?["name"] as? String == name)
            #expect(object["state_topic"] as? String == "systole/sensor/a09e1a948d23")
        }
    }

    @Test func withoutHeartRateItsEntitiesAreWithdrawnAndItsValuesLeftOut() throws {
        let sensor = LiveSensor(address: "A0:9E:1A:94:8D:23", state: "streaming", connected: true, battery: 80)
        let configs = Self.messages.discovery(of: sensor, showsHeartRate: false)
        let heartRate = try #require(configs.first { $0.topic.hasSuffix("/heart_rate/config") })
        #expect(heartRate.payload.isEmpty && heartRate.retain)
        let workout = Self.messages.workoutDiscovery(showsHeartRate: false)
        #expect(
            workout.filter { $0.payload.isEmpty }.map(\.topic).sorted() == [
                "homeassistant/sensor/systole_gym_1/heart_rate/config",
                "homeassistant/sensor/systole_gym_1/zone/config",
            ]
        )
        let status = LiveStatus(state: "running", elapsed: 12.34, at: 0, sensors: [sensor]).withoutHeartRate()
        for message in Self.messages.states(status) {
            let text = String(decoding: message.payload, as: UTF8.self)
            #expect(!text.contains("heart_rate") && !text.contains("zone"), "\(text)")
            #expect(!message.retain)
        }
    }

    @Test func theLiveValuesCarryWhatTheStatusSays() throws {
        let sensor = LiveSensor(
            address: "A0:9E:1A:94:8D:23",
            state: "streaming",
            connected: true,
            battery: 80,
            contact: "detected",
            bpm: 151
        )
        let status = LiveStatus(
            state: "running",
            activity: "running",
            elapsed: 12.34,
            at: 0,
            heartRate: LiveHeartRate(bpm: 151, sensor: "A0:9E:1A:94:8D:23", zone: 4),
            sensors: [sensor, LiveSensor(address: nil, state: "searching", connected: false)]
        )
        let messages = Self.messages.states(status)
        #expect(messages.map(\.topic) == ["systole/sensor/a09e1a948d23", "systole/workout"])
        let strap = try Self.object(messages[0])
        #expect(strap["heart_rate"] as? Int == 151 && strap["battery"] as? Int == 80)
        #expect(strap["connected"] as? String == "ON" && strap["contact"] as? String == "detected")
        let workout = try Self.object(messages[1])
        #expect(workout["state"] as? String == "running" && workout["elapsed"] as? Double == 12.3)
        #expect(workout["heart_rate"] as? Int == 151 && workout["zone"] as? Int == 4)
        // A disconnected sensor's last heart rate is not passed on as current.
        var lost = status
        lost.sensors[0].connected = false
        #expect(try Self.object(Self.messages.states(lost)[0])["heart_rate"] is NSNull)
    }
}
