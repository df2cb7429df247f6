/// How much the outputs show: the live log, the web page and overlay, /metrics and MQTT (`privacy`).
public enum Privacy: String, Sendable, Equatable {
    /// Every metric.
    case full
    /// Only the workout's duration.
    case durationOnly = "duration-only"
}

/// How the live log's lines are written (`[live_log] format`).
public enum LiveLogFormat: String, Sendable, Equatable {
    /// A line of `key=value` words (``LiveLogLine/text(date:reading:athlete:snapshot:privacy:)``).
    case text
    /// A JSON object per line (``LiveLogLine/json(date:reading:athlete:snapshot:privacy:)``).
    case json
}
