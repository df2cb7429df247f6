import BlueZSimulator
import Foundation
import Testing

@Suite struct ScenarioTests {
    func decode(_ json: String) throws -> Scenario {
        try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
    }

    func load(_ json: String) throws -> Scenario {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID()).json").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(json.utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try Scenario.load(path: path)
    }

    @Test func everyFieldHasADefault() throws {
        let empty = try decode("{}")
        #expect(empty == Scenario())
        #expect(empty.sensors.count == 1 && empty.sensors[0].model == .polarH10)
        #expect(empty.adapters == [Scenario.AdapterSpec()])

        let full = try decode(
            """
            {"seed": 7, "restarts": [{"at": 20, "for": 2}],
             "sensors": [{"model": "garmin-hrm", "count": 3, "rate": 4, "energyStart": 65500,
                          "profile": {"kind": "intervals", "low": 100, "high": 160, "work": 30, "rest": 30},
                          "faults": [{"kind": "disconnect", "at": 10, "for": 5},
                                     {"kind": "malformed", "at": 0, "every": 7},
                                     {"kind": "contact-loss", "at": 3, "for": 2},
                                     {"kind": "ectopic", "at": 60, "every": 40},
                                     {"kind": "missed-beat", "at": 90, "for": 60, "every": 25}]}]}
            """
        )
        #expect(full.seed == 7)
        #expect(full.restarts == [Scenario.Window(at: 20, for: 2)])
        #expect(full.sensors[0].count == 3)
        #expect(full.sensors[0].profile.kind == .intervals)
        #expect(full.sensors[0].faults.map(\.kind) == [.disconnect, .malformed, .contactLoss, .ectopic, .missedBeat])
        #expect(full.sensors[0].faults[4].every == 25 && full.sensors[0].faults[4].for == 60)
    }

    @Test func unknownKeysAndBadValuesAreRefusedWithTheirPlace() throws {
        let typo = #expect(throws: Scenario.Invalid.self) { try load(#"{"sensors": [{"modle": "polar-h10"}]}"#) }
        #expect(typo?.description.contains("unknown key 'modle'") == true)
        #expect(typo?.description.contains("sensors.[0]") == true || typo?.description.contains("sensors[0]") == true)

        let model = #expect(throws: Scenario.Invalid.self) { try load(#"{"sensors": [{"model": "fitbit"}]}"#) }
        #expect(model?.description.contains("sensors") == true)

        let fault = #expect(throws: Scenario.Invalid.self) { try load(#"{"sensors": [{"faults": [{"at": 1}]}]}"#) }
        #expect(fault?.description.contains("missing 'kind'") == true)

        let rate = #expect(throws: Scenario.Invalid.self) { try load(#"{"sensors": [{"rate": 0}]}"#) }
        #expect(rate?.description.contains("rate must be between") == true)

        let named = #expect(throws: Scenario.Invalid.self) { try load(#"{"sensors": [{"count": 2, "name": "x"}]}"#) }
        #expect(named?.description.contains("only make sense with count 1") == true)

        let everyBeat = #expect(throws: Scenario.Invalid.self) {
            try load(#"{"sensors": [{"faults": [{"kind": "ectopic", "at": 1}]}]}"#)
        }
        #expect(everyBeat?.description == "sensors[0].faults[0]: a fault of kind ectopic needs every ≥ 2 (beats)")

        let missing = #expect(throws: Scenario.Invalid.self) { try Scenario.load(path: "/nonexistent/s.json") }
        #expect(missing?.description == "cannot read scenario file /nonexistent/s.json")
    }
}
