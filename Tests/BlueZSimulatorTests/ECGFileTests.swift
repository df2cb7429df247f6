import Foundation
import Testing

@testable import BlueZSimulator

/// `--ecg-file`: a file of µV values read whole or refused with where and why.
@Suite struct ECGFileTests {
    func load(_ text: String) throws(Scenario.Invalid) -> [Int32] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ecg-\(UUID()).txt").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try PMDSpec.loadECG(path: path)
    }

    @Test func valuesSeparatedByWhiteSpaceOrCommasAreReadAndRounded() throws {
        #expect(try load("12\n-30, 7.6\t 0\r\n1e3\n") == [12, -30, 8, 0, 1000])
    }

    @Test func whatIsNotAValueWithin24BitsIsRefusedWithItsPlace() {
        for (text, expected) in [
            ("1\n2\nthree\n", "value 3 ('three')"),
            ("1 nan 2", "value 2 ('nan')"),
            ("1 inf", "value 2 ('inf')"),
            ("8388607", "value 1 ('8388607')"),
            ("-9000000", "value 1 ('-9000000')"),
            ("1 \u{1B}[2J", "value 2 ('\\u{1B}[2J')"),
        ] {
            let error = #expect(throws: Scenario.Invalid.self) { try load(text) }
            #expect(error?.description.contains(expected) == true, "\(text): \(String(describing: error))")
            #expect(error?.description.contains("is not a µV value within 24 bits") == true)
            // What the file holds is quoted with its control characters escaped, never played to the terminal.
            #expect(error?.description.contains("\u{1B}") == false)
        }
        let empty = #expect(throws: Scenario.Invalid.self) { try load(" \n, ") }
        #expect(empty?.description.contains("holds no value") == true)
        let missing = #expect(throws: Scenario.Invalid.self) { try PMDSpec.loadECG(path: "/nonexistent/ecg.txt") }
        #expect(missing?.description.contains("cannot read the ECG file") == true)
    }
}
