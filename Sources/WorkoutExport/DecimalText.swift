/// Numbers as the text exports write them: a point, no exponent, no grouping and no locale, so every reader
/// (Python, spreadsheets in any locale's import dialog, xsd:double) parses the same value.
enum DecimalText {
    /// `value` rounded to `decimals` digits after the point (halves away from zero), all of them written;
    /// nil for a value that is not finite or too large to round exactly.
    static func fixed(_ value: Double, decimals: Int) -> String? {
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (value * Double(scale)).rounded()
        // Beyond 2^53 a Double holds no exact integer, and Int64 would trap further on.
        guard scaled.isFinite, abs(scaled) < 9_007_199_254_740_992 else { return nil }
        let units = Int64(scaled)
        let magnitude = units.magnitude
        let whole = String(magnitude / UInt64(scale))
        let sign = units < 0 ? "-" : ""
        guard decimals > 0 else { return sign + whole }
        return sign + whole + "." + padded(Int(magnitude % UInt64(scale)), width: decimals)
    }

    /// Like ``fixed(_:decimals:)`` without trailing zeros, and without the point when no digit follows it
    /// (`120`, `130.5`).
    static func trimmed(_ value: Double, maxDecimals: Int) -> String? {
        guard var text = fixed(value, decimals: maxDecimals) else { return nil }
        guard text.contains(".") else { return text }
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    /// `value` with leading zeros to `width` digits.
    static func padded(_ value: Int, width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
