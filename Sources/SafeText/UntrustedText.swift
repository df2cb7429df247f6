/// Text a nearby device chose: its advertised name, the GAP Device Name bluetoothd reads from it, and so its alias.
/// Anyone within radio range can put escape sequences, line breaks or kilobytes in there, and bluetoothd passes
/// them on unchanged. Cleaned where it enters (BlueZ's `BluetoothDevice.name` and `alias`), so nothing downstream (the store,
/// systoled's log, the live log, `systole scan`, `sensors`, `status`, JSON) ever holds a control character or a
/// name longer than ``maximumLength`` that came from the air.
public enum UntrustedText {
    /// Characters kept of a name (BLE names are at most 248 bytes; sensors use a dozen or two characters).
    public static let maximumLength = 64

    /// `text` with every control, format (bidirectional overrides, zero-width) and line- or paragraph-separator
    /// character replaced by U+FFFD, surrounding white space removed, and cut to ``maximumLength`` characters
    /// (ending in `…` when cut).
    public static func clean(_ text: String) -> String {
        var cleaned = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            cleaned.append(scalar.isUnsafeToShow ? "\u{FFFD}" : scalar)
        }
        let trimmed = String(cleaned).trimmingSpaces()
        guard trimmed.count > maximumLength else { return trimmed }
        return String(trimmed.prefix(maximumLength - 1)) + "…"
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return String(text)
    }
}
