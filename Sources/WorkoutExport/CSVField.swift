import Foundation
import SafeText

/// Fields of a CSV file as RFC 4180 writes them.
enum CSVField {
    /// `field` as it goes into the file: in double quotes, with its quotes doubled, when it holds a comma, a quote,
    /// a carriage return or a line feed; as it is otherwise.
    static func quoted(_ field: String) -> String {
        let needsQuotes = field.unicodeScalars.contains { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" }
        guard needsQuotes else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The characters a spreadsheet reads, at the start of a cell, as the start of a formula (OWASP's list for
    /// CSV injection): `=`, `+`, `-`, `@`, tab and carriage return.
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    /// User text made safe to open in a spreadsheet: control characters replaced (`SafeText.ExportText`), and a
    /// leading `'` added when it starts like a formula, which is OWASP's advice and what spreadsheets themselves
    /// take to mean "text" (`=cmd|…` is written `'=cmd|…`). Readers other than spreadsheets see the `'`.
    static func neutralised(_ text: String) -> String {
        let cleaned = ExportText.replacing(in: text)
        guard let first = cleaned.unicodeScalars.first, formulaStarts.contains(first) else { return cleaned }
        return "'" + cleaned
    }
}
