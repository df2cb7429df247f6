import WorkoutAnalysis

/// The RR intervals of a recording as a text file of one column: each beat's interval in whole milliseconds, one a
/// line, LF after each, no header. This is what Kubios HRV reads as RR data (its import is told the column and
/// the number of header lines, here none) and what Elite HRV exports and imports.
///
/// Gaps: where beats were lost (``ActivityRecording/beatRuns``), one empty line separates the runs, so the file
/// never claims two intervals were successive when they were not, and no interval is made up. Whether a program
/// bridges the gap is up to it: numpy's `loadtxt`, pandas and R's `read.table` skip empty lines and so join the
/// runs as if they were one (one spurious successive difference, and the time after the gap shifted earlier by
/// what was lost); what Kubios does with an empty line is not documented where we could find it. Writing the lost
/// time as an interval of its own would keep the time axis but invent a value that, for a short gap, looks like a
/// real beat; writing a word would make most readers stop. systole's own HRV never bridges a gap.
///
/// Whole milliseconds, as these programs expect: the strap's resolution is 1/1024 s, so rounding moves an interval
/// by at most half a millisecond.
public enum RRIntervalFile {
    /// The file's bytes: ASCII.
    public static func encode(_ recording: ActivityRecording) -> [UInt8] {
        let collected = CollectedBytes()
        // A sink that keeps everything never throws.
        try? write(recording, to: collected.sink)
        return collected.bytes
    }

    /// Writes the file to `sink` a chunk at a time.
    public static func write(_ recording: ActivityRecording, to sink: @escaping ExportSink) throws {
        var output = ExportOutput(sink)
        for (index, run) in recording.beatRuns.enumerated() {
            if index > 0 { output += "\n" }
            for beat in run { output += "\(Int(beat.milliseconds.rounded()))\n" }
        }
        try output.finish()
    }
}
