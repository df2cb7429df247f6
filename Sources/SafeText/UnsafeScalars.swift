extension Unicode.Scalar {
    /// Whether the scalar may not be shown as it is in text someone else chose: a control character (a terminal
    /// reads escape sequences in them), a format character (bidirectional overrides, zero-width), a line or
    /// paragraph separator, or one with no meaning to show (private use, unassigned, a lone surrogate).
    public var isUnsafeToShow: Bool {
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate: true
        default: false
        }
    }
}
