import Foundation
import Testing

@testable import WorkoutExport

/// The pieces of text every text export is made of: times, numbers, XML text and CSV fields.
@Suite struct ExportTextTests {
    @Test func timesAreFoundationsISO8601ToTheMillisecond() throws {
        let reference = ISO8601DateFormatter()
        reference.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        reference.timeZone = .gmt
        var time = UTCTime()
        // Days across leap years, century rules and month ends, at whole milliseconds so both round alike.
        for step in 0..<3000 {
            let milliseconds = Int64(step) * 1_234_567_891 % 4_102_444_800_000
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            #expect(time.text(date) == reference.string(from: date), "\(milliseconds) ms")
        }
        #expect(time.text(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
        #expect(time.text(Date(timeIntervalSince1970: 1_795_333_160.9996)) == "2026-11-22T07:39:21.000Z")
    }

    @Test func timesOutsideTheRangeAreClampedNotTrapped() {
        var time = UTCTime()
        #expect(time.text(Date(timeIntervalSince1970: .nan)) == "1970-01-01T00:00:00.000Z")
        #expect(time.text(Date(timeIntervalSince1970: -5)) == "1970-01-01T00:00:00.000Z")
        #expect(time.text(Date(timeIntervalSince1970: 1e300)) == "9999-12-31T23:59:59.999Z")
    }

    @Test func decimalsHaveAPointAndNoExponent() {
        #expect(DecimalText.fixed(1.5, decimals: 3) == "1.500")
        #expect(DecimalText.fixed(-0.0004, decimals: 3) == "0.000")
        #expect(DecimalText.fixed(-2.25, decimals: 1) == "-2.3")
        #expect(DecimalText.fixed(1e20, decimals: 3) == nil)
        #expect(DecimalText.fixed(.infinity, decimals: 0) == nil)
        #expect(DecimalText.trimmed(120, maxDecimals: 3) == "120")
        #expect(DecimalText.trimmed(130.5, maxDecimals: 3) == "130.5")
        #expect(DecimalText.trimmed(0.00001, maxDecimals: 3) == "0")
        #expect(DecimalText.trimmed(1e-7, maxDecimals: 3) == "0")
    }

    @Test func xmlTextEscapesMarkupAndReplacesWhatXMLForbids() {
        #expect(XMLText.escaped("<a href=\"x\">&'</a>") == "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;")
        #expect(XMLText.escaped("]]>") == "]]&gt;")
        #expect(
            XMLText.escaped("a\u{0}b\u{1B}c\u{7F}d\u{85}e\u{FFFF}") == "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e\u{FFFD}"
        )
        #expect(XMLText.escaped("tab\tline\ncr\r") == "tab\tline\ncr&#13;")
        #expect(XMLText.escaped("Zürich 🏃") == "Zürich 🏃")
    }

    @Test func csvFieldsAreQuotedOnlyWhenRFC4180NeedsIt() {
        #expect(CSVField.quoted("plain text") == "plain text")
        #expect(CSVField.quoted("a,b") == "\"a,b\"")
        #expect(CSVField.quoted("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(CSVField.quoted("one\ntwo") == "\"one\ntwo\"")
        #expect(CSVField.quoted("cr\r") == "\"cr\r\"")
    }

    @Test func userTextThatStartsLikeAFormulaIsNeutralised() {
        for start in ["=", "+", "-", "@", "\t", "\r"] {
            #expect(CSVField.neutralised(start + "1+1") == "'" + start + "1+1")
        }
        #expect(CSVField.neutralised(" =1+1") == " =1+1")
        #expect(CSVField.neutralised("a=1") == "a=1")
        #expect(CSVField.neutralised("\u{0}=x") == "\u{FFFD}=x")
    }
}
