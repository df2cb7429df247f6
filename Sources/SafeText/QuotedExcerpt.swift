extension StringProtocol {
    /// The text as an error message may repeat it back: in single quotes, control characters escaped
    /// (`\u{1B}`), and cut after `maximum` Unicode scalars with the full length in bytes, so that a caller who sent a
    /// megabyte gets a line back, not the megabyte, and no terminal or log reads an escape sequence it chose.
    /// Scalars, not characters, are counted: one character may be a base and tens of thousands of combining marks.
    ///
    /// `'abc'`, `'aaaaaaaa…' (1048576 bytes)`.
    public func quotedExcerpt(maximum: Int = 64) -> String {
        var result = "'"
        var count = 0
        for scalar in unicodeScalars {
            guard count < maximum else {
                return result + "…' (\(utf8.count) bytes)"
            }
            if scalar.isUnsafeToShow {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return result + "'"
    }
}
