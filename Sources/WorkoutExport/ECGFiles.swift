import Foundation
import WorkoutAnalysis
import WorkoutKit

/// The ECG of a recording as EDF+ (``EDFRecording``): the samples in µV at the measured rate, the R-peaks systole
/// found as annotations, the athlete and the sensor in the header.
public enum EDFActivityFile {
    /// The ECG's file; throws ``EDFRecording/Failure/noECG`` when the workout holds none.
    public static func recording(
        _ recording: ActivityRecording,
        timeZone: TimeZone = .current
    ) throws(EDFRecording.Failure) -> EDFRecording {
        let analysis = ElectrocardiogramAnalysis(recording.electrocardiogram)
        guard !analysis.runs.isEmpty else { throw .noECG }
        let device = recording.electrocardiogram.first?.device
        let sensor = [device?.name, device?.address].compactMap { $0 }.joined(separator: " ")
        var file = EDFRecording(
            runs: analysis.runs.map { EDFRecording.Run(start: $0.start, rate: $0.rate, microvolts: $0.microvolts) },
            rPeaks: analysis.rPeakDates,
            athlete: recording.athlete,
            sensor: sensor.isEmpty ? "ECG sensor" : sensor,
            timeZone: timeZone
        )
        // The same strap's accelerometer, in runs without a gap.
        let pieces = recording.acceleration.filter { $0.kind == .acceleration && $0.isValid && $0.device == device }
        var runs: [[WaveformSample]] = []
        for piece in pieces {
            let follows =
                runs.last?.last.map { previous in
                    abs(piece.startDate.timeIntervalSince(previous.endDate)) <= 1.5 / previous.samplingFrequency
                } ?? false
            if piece.precededByGap || !follows { runs.append([]) }
            runs[runs.count - 1].append(piece)
        }
        file.acceleration = runs.map { run in
            let count = run.reduce(0) { $0 + $1.count }
            let seconds = run[run.count - 1].endDate.timeIntervalSince(run[0].startDate)
            return EDFRecording.AccelerationRun(
                start: run[0].startDate,
                rate: seconds > 0 ? Double(count) / seconds : run[0].samplingFrequency,
                x: run.flatMap { $0.channels[0] },
                y: run.flatMap { $0.channels[1] },
                z: run.flatMap { $0.channels[2] }
            )
        }
        return file
    }

    /// Writes the file to `sink`.
    public static func write(_ recording: ActivityRecording, to sink: @escaping ExportSink) throws {
        var output = ExportOutput(sink)
        output.append(try Self.recording(recording).encoded())
        try output.finish()
    }
}

/// The ECG of a recording as CSV (RFC 4180, CRLF, UTF-8): a sample a row, with `time` (ISO 8601 UTC to the
/// millisecond), `elapsed_s` (seconds since the workout's start, six decimals, pauses included: the waveform has no
/// pauses), `ecg_uv` (µV as the sensor sent it), `r_peak` (`1` on the sample systole took for an R-peak, else
/// empty) and `gap` (`1` on the first sample after lost ones).
public enum ECGCSVFile {
    public static let header = ["time", "elapsed_s", "ecg_uv", "r_peak", "gap"]

    /// Writes the file to `sink`; throws ``EDFRecording/Failure/noECG`` when the workout holds no ECG.
    public static func write(_ recording: ActivityRecording, to sink: @escaping ExportSink) throws {
        let analysis = ElectrocardiogramAnalysis(recording.electrocardiogram)
        guard !analysis.runs.isEmpty else { throw EDFRecording.Failure.noECG }
        var output = ExportOutput(sink)
        var time = UTCTime()
        output += header.joined(separator: ",") + "\r\n"
        for (number, run) in analysis.runs.enumerated() {
            let peaks = Set(run.rPeaks)
            for (index, value) in run.microvolts.enumerated() {
                let date = run.date(ofSampleAt: index)
                let elapsed = DecimalText.fixed(date.timeIntervalSince(recording.start), decimals: 6) ?? ""
                let peak = peaks.contains(index) ? "1" : ""
                let gap = index == 0 && number > 0 ? "1" : ""
                output += "\(time.text(date)),\(elapsed),\(value),\(peak),\(gap)\r\n"
            }
        }
        try output.finish()
    }
}
