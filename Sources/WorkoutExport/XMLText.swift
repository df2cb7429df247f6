import SafeText

/// Text as XML 1.0 character data or an attribute value.
enum XMLText {
    /// `text` with the markup characters escaped and the characters XML 1.0 forbids or discourages replaced
    /// (`SafeText.ExportText`), so user text can neither end an element nor make the file one no parser reads.
    /// A carriage return is written as a reference, as a parser would otherwise read it as a line feed.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            // `>` only matters in `]]>`, and quotes only in attributes; escaping them everywhere costs nothing.
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\r": out += "&#13;"
            default:
                out.unicodeScalars.append(
                    ExportText.isReplaced(scalar) ? ExportText.replacement : scalar
                )
            }
        }
        return out
    }
}
