import Foundation

/// Activity files as other tools write them, for the import's tests: FIT files written by fit-tool (PyPI, an
/// encoder independent of systole's, through write_fit.py beside this file), and TCX documents as Garmin Connect,
/// Polar Flow and Strava write them (valid against Garmin's schema).
public enum ActivityFiles {
    /// One activity for write_fit.py (times in Unix seconds).
    public struct FITSpec: Encodable, Sendable {
        public var path: String
        public var start: Double
        public var end: Double
        public var sport = 1
        public var subSport = 0
        public var manufacturer = 123
        public var product = 7
        public var serial = 12_345
        public var productName: String? = "Polar Vantage V3"
        public var calories: Int? = 321
        /// [time, bpm] pairs.
        public var records: [[Double]] = []
        /// RR intervals in seconds.
        public var rr: [Double] = []
        /// [from, to] pairs.
        public var pauses: [[Double]] = []
        /// [from, to] pairs.
        public var laps: [[Double]] = []

        public init(path: String, start: Double, end: Double) {
            self.path = path
            self.start = start
            self.end = end
        }
    }

    /// Writes the activities with fit-tool; returns each file's bytes (the files are removed).
    public static func writtenFIT(_ specs: [FITSpec]) async throws -> [[UInt8]] {
        let spec = FileManager.default.temporaryDirectory.appendingPathComponent("systole-fit-\(UUID()).json")
        try JSONEncoder().encode(["activities": specs]).write(to: spec)
        defer { try? FileManager.default.removeItem(at: spec) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("write_fit.py")
        _ = try await PythonTools.run(script.path, [spec.path])
        return try specs.map { spec in
            defer { try? FileManager.default.removeItem(atPath: spec.path) }
            return Array(try Data(contentsOf: URL(fileURLWithPath: spec.path)))
        }
    }

    /// A fresh path in the temporary folder, ending in `.extension`.
    public static func path(_ extension: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("systole-\(UUID()).\(`extension`)").path
    }

    /// A 30-minute run with a pause and two laps, heart rate every second (none in the pause) and 500 RR intervals.
    public static func fitRun(start: Double = 1_790_000_000) -> FITSpec {
        var spec = FITSpec(path: path("fit"), start: start, end: start + 1800)
        spec.pauses = [[start + 600, start + 700]]
        spec.records = stride(from: start + 1, to: start + 1800, by: 1).filter { !(600..<700).contains($0 - start) }
            .map { [$0, Double(100 + Int($0 - start) % 60)] }
        spec.rr = (0..<500).map { 0.6 + Double($0 % 7) / 100 }
        spec.laps = [[start, start + 900], [start + 900, start + 1800]]
        return spec
    }

    /// A TCX activity of `laps` laps of `points` trackpoints each, one a second from `start` (a bpm that climbs).
    public static func tcxDocument(start: Date, laps: Int = 2, points: Int = 30, sport: String = "Running") -> String {
        let time = { (offset: Int) in start.addingTimeInterval(Double(offset)).formatted(.iso8601) }
        var lapsXML = ""
        for lap in 0..<laps {
            let first = lap * points
            let trackpoints = (0..<points).map { index in
                """
                <Trackpoint><Time>\(time(first + index))</Time>\
                <HeartRateBpm><Value>\(100 + (first + index) % 50)</Value></HeartRateBpm></Trackpoint>
                """
            }.joined()
            lapsXML += """
                <Lap StartTime="\(time(first))"><TotalTimeSeconds>\(points)</TotalTimeSeconds>\
                <DistanceMeters>0</DistanceMeters><Calories>\(10 + lap)</Calories><Intensity>Active</Intensity>\
                <TriggerMethod>Manual</TriggerMethod><Track>\(trackpoints)</Track></Lap>
                """
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- exported by a test -->
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
              <Activities>
                <Activity Sport="\(sport)">
                  <Id>\(time(0))</Id>
                  \(lapsXML)
                  <Creator xsi:type="Device_t"><Name>Forerunner 965 &amp; strap</Name><UnitId>3456789</UnitId>\
            <ProductID>4315</ProductID><Version><VersionMajor>20</VersionMajor><VersionMinor>26</VersionMinor>\
            </Version></Creator>
                </Activity>
              </Activities>
            </TrainingCenterDatabase>
            """
    }
}
