import Foundation
import WorkoutAnalysis

/// The CSV file of a recording: a header and one row per heart-rate reading, as RFC 4180 has it (comma-separated,
/// CRLF after every row, a field in double quotes with its quotes doubled when it holds a comma, a quote, a CR or
/// an LF), UTF-8 without a byte order mark.
///
/// The columns (``header``):
/// - `time`: the reading's time, ISO 8601 in UTC to the millisecond (``UTCTime``).
/// - `elapsed_s`: seconds since the start with pauses excluded, three decimals (stands still while paused).
/// - `bpm`: the heart rate as stored, without trailing zeros (`120`, `130.5`).
/// - `contact`: `yes` on a reading of a sensor that reports skin contact (systole stores a reading only with
///   contact: without it a strap has no heart rate), `unsupported` on one from a sensor that cannot tell, empty when
///   the workout did not keep which (recorded before systole kept it). Where the sensor said it lost contact, a row
///   at that moment has `no`, an empty `bpm` and nothing else but time, elapsed time and lap: the readings are
///   missing until contact is back, and the `no` row says why.
/// - `rr_ms`: the RR intervals of the beats that arrived with this reading, in milliseconds with one decimal,
///   separated by spaces. One decimal keeps the strap's 1/1024 s exactly (ticks = ms × 1.024, rounded); whole
///   milliseconds would not. A beat belongs to the first reading at or after it (beats after the last reading to
///   the last one). Where beats were lost before an interval, the word `gap` comes before it, so nobody takes the
///   two intervals around it for successive beats.
/// - `energy_kj`: the energy a sensor measured over the interval ending at this reading, in kilojoules without
///   trailing zeros; empty when none was measured within 0.5 s of it. Two measurements nearest the same reading
///   are added up. Estimated energy is not per reading and is not in the file.
/// - `lap`: the number of the lap the reading is in, from 1 (``RecordingLayout``); empty outside every lap.
/// - `marker`: the texts of the markers set after the previous reading and up to this one (those before the first
///   reading with the first, those after the last with the last), joined by `; `. Marker texts are users' text:
///   control characters other than tab and line breaks become U+FFFD, and a field that starts like a spreadsheet
///   formula (`=`, `+`, `-`, `@`, tab, CR) gets a leading `'` (OWASP's advice against CSV injection; spreadsheets
///   show the text, other readers see the `'`).
/// - `athlete`: who the workout records (systoled's `[athletes]`), the same on every row, so the files of a team
///   session can be put together; empty when no athlete is named. Neutralised as marker texts are.
///
/// Readings taken while paused are rows like any other (their `elapsed_s` stands still); a recording without
/// readings is the header alone, so its beats and markers are only in the other exports.
public enum CSVActivityFile {
    /// The header row's column names.
    public static let header = [
        "time", "elapsed_s", "bpm", "contact", "rr_ms", "energy_kj", "lap", "marker", "athlete",
    ]

    /// How far from a reading an energy measurement may be and still be written in its row.
    static let energyTolerance: TimeInterval = 0.5

    /// The file's bytes: UTF-8.
    public static func encode(_ recording: ActivityRecording) -> [UInt8] {
        let collected = CollectedBytes()
        // A sink that keeps everything never throws.
        try? write(recording, to: collected.sink)
        return collected.bytes
    }

    /// The file as text.
    static func text(_ recording: ActivityRecording) -> String {
        String(decoding: encode(recording), as: UTF8.self)
    }

    /// Writes the file to `sink` a chunk at a time, row by row: beats and markers are taken in time order as their
    /// rows come, so nothing a row at a time is held beyond the recording.
    public static func write(_ recording: ActivityRecording, to sink: @escaping ExportSink) throws {
        let readings = recording.readings.sorted { $0.date < $1.date }
        let layout = RecordingLayout(recording)
        let dates = readings.map(\.date)
        var time = UTCTime()

        // A measurement goes to the reading nearest it (within the tolerance); most rows have none.
        var energy: [Int: Double] = [:]
        for measured in recording.energyReadings {
            guard let row = nearestRow(to: measured.date, in: dates),
                abs(dates[row].timeIntervalSince(measured.date)) <= energyTolerance
            else { continue }
            energy[row, default: 0] += measured.kilojoules
        }
        // A beat or a marker belongs to the first reading at or after it; those after the last reading, to the last.
        let inOrder = recording.beats.isInTimeOrder ? recording.beats : recording.beats.sorted { $0.date < $1.date }
        var beats = inOrder[...]
        var markers = recording.markers.sorted(by: { $0.date < $1.date })[...]
        func taken<T>(_ items: inout ArraySlice<T>, row: Int, date: (T) -> Date) -> ArraySlice<T> {
            let isLast = row == dates.count - 1
            let count = isLast ? items.count : items.prefix { date($0) <= dates[row] }.count
            defer { items = items.dropFirst(count) }
            return items.prefix(count)
        }

        let contact = recording.reportsContact.map { $0 ? "yes" : "unsupported" } ?? ""
        let athlete = recording.athlete.map(CSVField.neutralised) ?? ""
        // Rows of lost contact go in time order among the readings' (before a reading at the same moment).
        var lost = recording.contactLost.map(\.start).sorted()[...]
        func lostRow(_ date: Date) -> String {
            let fields = [
                time.text(date), DecimalText.fixed(recording.elapsed(at: date), decimals: 3) ?? "", "", "no", "", "",
                layout.lap(at: date).map { String($0 + 1) } ?? "", "", athlete,
            ]
            return fields.map(CSVField.quoted).joined(separator: ",") + "\r\n"
        }

        var csv = ExportOutput(sink)
        csv += header.joined(separator: ",") + "\r\n"
        for (index, reading) in readings.enumerated() {
            while let date = lost.first, date <= reading.date {
                csv += lostRow(date)
                lost = lost.dropFirst()
            }
            var intervals: [String] = []
            for beat in taken(&beats, row: index, date: \.date) {
                if beat.precededByGap { intervals.append("gap") }
                intervals.append(DecimalText.fixed(beat.milliseconds, decimals: 1) ?? "")
            }
            let texts = taken(&markers, row: index, date: \.date).map(\.text)
            let fields = [
                time.text(reading.date),
                DecimalText.fixed(recording.elapsed(at: reading.date), decimals: 3) ?? "",
                DecimalText.trimmed(reading.bpm, maxDecimals: 3) ?? "",
                contact,
                intervals.joined(separator: " "),
                energy[index].flatMap { DecimalText.trimmed($0, maxDecimals: 3) } ?? "",
                layout.lap(at: reading.date).map { String($0 + 1) } ?? "",
                texts.isEmpty ? "" : CSVField.neutralised(texts.joined(separator: "; ")),
                athlete,
            ]
            csv += fields.map(CSVField.quoted).joined(separator: ",") + "\r\n"
        }
        for date in lost { csv += lostRow(date) }
        try csv.finish()
    }

    /// The row of the first reading at or after `date`, the last row after the last reading; nil without rows.
    static func row(atOrAfter date: Date, in dates: [Date]) -> Int? {
        guard !dates.isEmpty else { return nil }
        var low = 0
        var high = dates.count
        while low < high {
            let middle = (low + high) / 2
            if dates[middle] < date { low = middle + 1 } else { high = middle }
        }
        return min(low, dates.count - 1)
    }

    /// The row of the reading nearest `date` (the earlier of two as near); nil without rows.
    static func nearestRow(to date: Date, in dates: [Date]) -> Int? {
        guard let after = row(atOrAfter: date, in: dates) else { return nil }
        guard after > 0 else { return after }
        let before = after - 1
        return abs(dates[before].timeIntervalSince(date)) <= abs(dates[after].timeIntervalSince(date)) ? before : after
    }
}

extension Array where Element == ActivityRecording.Beat {
    /// Whether each beat comes no earlier than the one before it.
    var isInTimeOrder: Bool { zip(self, dropFirst()).allSatisfy { $0.date <= $1.date } }
}
