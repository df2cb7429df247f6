/// The characters the text exports do not pass on from user text (marker texts): the C0 controls other than tab,
/// line feed and carriage return, DEL, the C1 controls, and U+FFFE and U+FFFF. XML 1.0 forbids the C0 ones and
/// the two non-characters (a parser rejects the whole file), discourages DEL and C1, and CSV readers choke on NUL;
/// none of them is something a person meant to write in a marker.
public enum ExportText {
    /// What an export writes instead: U+FFFD, so the reader sees that something was there.
    public static let replacement: Unicode.Scalar = "\u{FFFD}"

    public static func isReplaced(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: false
        case 0x00...0x1F, 0x7F...0x9F, 0xFFFE, 0xFFFF: true
        default: false
        }
    }

    /// `text` with each replaced character as U+FFFD.
    public static func replacing(in text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { scalars.append(isReplaced(scalar) ? replacement : scalar) }
        return String(scalars)
    }
}
