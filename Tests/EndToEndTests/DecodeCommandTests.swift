import Foundation
import HeartRateProfile
import SystoleTestSupport
import Testing

/// `systole decode` run as a real process.
@Suite struct DecodeCommandTests {
    @Test func humanOutputNamesEveryField() async throws {
        let result = try await systole("decode", "16485401EC02")
        #expect(result.status == 0)
        #expect(result.standardOutput == "72 bpm · contact detected · RR 332.0 ms, 730.5 ms\n")
        #expect(result.standardError.isEmpty)

        let energy = try await systole("decode", "18 AA BB 01 CC 01")
        #expect(energy.standardOutput == "170 bpm · contact not supported · energy 443 kJ · RR 449.2 ms\n")

        let saturated = try await systole("decode", "09:00:00:FF:FF")
        #expect(
            saturated.standardOutput.hasPrefix("0 bpm (uint16) · contact not supported · energy 65535 kJ (saturated")
        )

        let garmin = try await systole("decode", "10382D043500")
        #expect(garmin.standardOutput == "56 bpm · contact not supported · RR 1043.9 ms, 51.8 ms (implausible)\n")
    }

    @Test func bytesMayBeSeparateArgumentsOrOneQuotedString() async throws {
        let split = try await systole("decode", "16", "48", "54", "01", "EC", "02")
        let quoted = try await systole("decode", "16 48 54 01 EC 02")
        let colons = try await systole("decode", "16:48:54:01:ec:02")
        #expect(split.standardOutput == quoted.standardOutput)
        #expect(colons.standardOutput == quoted.standardOutput)
        #expect(split.status == 0)
    }

    @Test func jsonHasExactlyTheDocumentedKeys() async throws {
        let result = try await systole("decode", "--json", "1FC8007B0000043403")
        #expect(result.status == 0)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        )
        #expect(
            Set(object.keys) == [
                "heartRate", "format", "sensorContact", "energyExpended", "energySaturated", "rrIntervals",
                "rrIntervalsMs", "truncated",
            ]
        )
        #expect(object["heartRate"] as? Int == 200)
        #expect(object["format"] as? String == "uint16")
        #expect(object["sensorContact"] as? String == "detected")
        #expect(object["energyExpended"] as? Int == 123)
        #expect(object["energySaturated"] as? Bool == false)
        #expect(object["rrIntervals"] as? [Int] == [1024, 820])
        #expect(object["rrIntervalsMs"] as? [Double] == [1000, 800.78125])
        #expect(object["truncated"] as? Bool == false)
        #expect(result.standardOutput.filter { $0 == "\n" }.count == 1)
    }

    @Test func jsonUsesNullForAbsentEnergyAndFlagsTruncation() async throws {
        let result = try await systole("decode", "083C05", "--json")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        )
        #expect(object["energyExpended"] is NSNull)
        #expect(object["truncated"] as? Bool == true)
        #expect(object["heartRate"] as? Int == 60)
    }

    @Test func invalidPayloadExitsOneNamingTheOffset() async throws {
        let result = try await systole("decode", "013C")
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(
            result.standardError
                == "systole: decode: invalid Heart Rate Measurement: heart-rate field (uint16) at offset 1 needs 2 bytes, only 1 byte is present\n"
        )
        let empty = try await systole("decode", "")
        #expect(empty.status == 1)
        #expect(empty.standardError.contains("empty payload"))
        #expect(empty.standardError.contains("offset 0"))
    }

    @Test func textThatIsNotHexIsAUsageError() async throws {
        let letter = try await systole("decode", "06 4g")
        #expect(letter.status == 2)
        #expect(letter.standardError.contains("'g' at position 4 is not a hex digit"))
        #expect(letter.standardError.filter { $0 == "\n" }.count == 1)
        let odd = try await systole("decode", "064")
        #expect(odd.status == 2)
        #expect(odd.standardError.contains("3 hex digits"))
    }

    @Test func wrongArgumentsAreUsageErrors() async throws {
        #expect(try await systole("decode").status == 2)
        #expect(try await systole("decode", "--frobnicate", "00").status == 2)
        #expect(try await systole("no-such-command").status == 2)
    }

    @Test func versionAndHelpDescribeWhatExists() async throws {
        let version = try await systole("--version")
        #expect(version.status == 0)
        #expect(version.standardOutput.split(separator: ".").count == 3)
        let help = try await systole("--help")
        #expect(help.status == 0)
        #expect(help.standardOutput.contains("decode"))
        #expect(help.standardOutput.contains("Exit status"))
    }
}
