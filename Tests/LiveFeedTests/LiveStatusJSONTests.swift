import Foundation
import LiveFeed
import Testing

@Suite struct LiveStatusJSONTests {
    /// The hand-written JSON the page's events carry decodes, with Foundation's own decoder, to the same status:
    /// every key as `Codable` names it, nil values left out, names from the radio escaped.
    @Test(arguments: [true, false]) func theHandWrittenJSONDecodesToTheSameStatus(full: Bool) throws {
        let status = LiveStatus(
            state: "running",
            workoutID: "2D8E7158-2303-45D2-A36D-1E3197FD6F8A",
            activity: "running",
            start: 1_795_549_959.936_491_3,
            elapsed: 5.000_278_115_272_522,
            at: 1_795_549_965.1,
            heartRate: LiveHeartRate(bpm: 151, sensor: "A0:9E:1A:02:5C:C1", zone: 4),
            average: 72.5,
            maximum: 173,
            sensors: [
                LiveSensor(
                    address: "A0:9E:1A:02:5C:C1",
                    name: "\"},\\\u{1B}[31m<img src=x>é😀\n",
                    manufacturer: "Polar Electro OY",
                    state: "streaming",
                    connected: true,
                    battery: 72,
                    contact: "detected",
                    bpm: 151
                ),
                LiveSensor(address: nil, state: "searching", connected: false),
            ]
        )
        let shown = full ? status : status.withoutHeartRate()
        let decoded = try JSONDecoder().decode(LiveStatus.self, from: Data(shown.json.utf8))
        #expect(decoded == shown)
        let keys = try #require(try JSONSerialization.jsonObject(with: Data(shown.json.utf8)) as? [String: Any]).keys
        let codableKeys = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(shown)) as? [String: Any]
        ).keys
        #expect(Set(keys) == Set(codableKeys))
    }

    @Test func theJSONObjectEscapesWhatJSONAsks() throws {
        var object = JSONObject()
        let text = "q\"b\\s/\n\r\t\u{1}\u{1B}[31m\u{7F}é😀"
        object.add("s", text)
        object.add("n", nil as String?)
        object.add("i", -3)
        object.add("d", 0.1)
        object.add("nan", Double.nan)
        object.add("b", true)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(object.text.utf8)) as? [String: Any])
        #expect(parsed["s"] as? String == text)
        #expect(parsed["n"] is NSNull && parsed["nan"] is NSNull)
        #expect(parsed["i"] as? Int == -3 && parsed["d"] as? Double == 0.1 && parsed["b"] as? Bool == true)
    }
}
