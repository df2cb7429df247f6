import LiveFeed

/// What the web server shows, supplied by systoled with its privacy setting applied.
public protocol LiveWebSource: Sendable {
    /// Changes of the live status; the event stream sends a status after each.
    var feed: LiveFeed { get }
    /// The moment's status.
    func status() -> LiveStatus
    /// The current workout's heart rate so far, for the live chart (empty without a workout or heart rate).
    func history() async throws -> [ChartPoint]
    /// Finished workouts, newest first.
    func workouts() async throws -> [WorkoutSummary]
    /// A finished workout; nil when there is none with that id.
    func workout(id: String) async throws -> WorkoutDetail?
    /// A finished workout as a file; nil when there is no such workout, or the format is unknown or hidden.
    func export(id: String, format: String) async throws -> ExportedFile?
    /// The Prometheus text exposition of systoled's metrics.
    func metrics() -> [UInt8]
    /// The sensors' live ECG, for the page's strip; nil when it is not shown (`privacy = "duration-only"`).
    var liveECG: LiveECG? { get }
}

extension LiveWebSource {
    public var liveECG: LiveECG? { nil }
}
