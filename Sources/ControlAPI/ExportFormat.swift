import Foundation
import WorkoutAnalysis
import WorkoutExport

/// The file formats `ExportWorkout` writes (`systole export --format`).
public enum ExportFormat: String, CaseIterable, Sendable {
    /// A FIT activity file (Garmin Connect, Strava, intervals.icu, GoldenCheetah).
    case fit
    /// Training Center Database v2 (the older XML format the same tools import).
    case tcx
    /// A reading a row (spreadsheets, pandas).
    case csv
    /// RR intervals in ms, one a line (Kubios, Elite HRV).
    case rr
    /// The ECG as EDF+ (EDFbrowser, MNE, pyedflib), with systole's R-peaks as annotations.
    case edf
    /// The ECG as CSV, a sample a row.
    case ecgCSV = "csv-ecg"
    /// RR intervals in ms from the R-peaks systole finds in the ECG.
    case rrFromECG = "rr-ecg"

    /// Whether the file is made from the workout's ECG (which is read for it).
    public var needsECG: Bool { self == .edf || self == .ecgCSV || self == .rrFromECG }

    public var fileExtension: String {
        switch self {
        case .fit, .tcx, .csv, .edf: rawValue
        case .rr: "txt"
        case .ecgCSV: "ecg.csv"
        case .rrFromECG: "ecg-rr.txt"
        }
    }

    /// The file's media type, for a download.
    public var contentType: String {
        switch self {
        case .fit: "application/vnd.ant.fit"
        case .tcx: "application/vnd.garmin.tcx+xml"
        case .csv, .ecgCSV: "text/csv; charset=utf-8"
        case .rr, .rrFromECG: "text/plain; charset=utf-8"
        case .edf: "application/octet-stream"
        }
    }

    /// Writes the file of `recording` to `sink` a chunk at a time (``ExportSink``), never holding it whole.
    public func write(_ recording: ActivityRecording, to sink: @escaping ExportSink) throws {
        switch self {
        case .fit: try FITActivityFile.write(recording, to: sink)
        case .tcx: try TCXActivityFile.write(recording, to: sink)
        case .csv: try CSVActivityFile.write(recording, to: sink)
        case .rr: try RRIntervalFile.write(recording, to: sink)
        case .edf: try EDFActivityFile.write(recording, to: sink)
        case .ecgCSV: try ECGCSVFile.write(recording, to: sink)
        case .rrFromECG:
            guard !recording.electrocardiogram.isEmpty else { throw EDFRecording.Failure.noECG }
            try RRIntervalFile.write(recording.withBeatsFromECG, to: sink)
        }
    }

    /// A file name from the workout's start (local time), activity and athlete: `2026-11-24-0730-running.fit`,
    /// `2026-11-24-0730-running-Ben-Lima.fit`.
    public func fileName(for recording: ActivityRecording, timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: recording.start)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        let activity = recording.activity.name.lowercased().filter { $0.isLetter || $0.isNumber || $0 == "-" }
        // A team session's files differ by athlete: the name goes in, as letters, digits and dashes.
        let athlete = (recording.athlete ?? "").map { $0.isLetter || $0.isNumber ? $0 : "-" }.prefix(64)
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day))-\(two(parts.hour))\(two(parts.minute))-"
            + "\(activity.isEmpty ? "workout" : activity)\(athlete.isEmpty ? "" : "-" + String(athlete)).\(fileExtension)"
    }
}
