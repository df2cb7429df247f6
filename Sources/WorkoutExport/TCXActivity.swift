import Foundation
import WorkoutAnalysis
import WorkoutKit

/// The TCX file of a recording: Garmin's Training Center Database v2 (`TrainingCenterDatabasev2.xsd`), which
/// Strava, Garmin Connect, TrainingPeaks, Golden Cheetah and most training logs import.
///
/// One `Activity` with a `Lap` per lap (``ActivityRecording/lapsOrWhole``), in the schema's element order:
/// - `TotalTimeSeconds`: the lap's timer time, pauses excluded. `DistanceMeters` is 0: the schema requires it and
///   systole measures no distance.
/// - `Calories`: the lap's share of the workout's energy, as the FIT file has it; left out when the energy is not
///   known.
/// - `AverageHeartRateBpm` and `MaximumHeartRateBpm`: of the readings the lap's track holds (so pauses are
///   excluded, as in `systole workouts show`); left out when it holds none.
/// - `Intensity` Active and `TriggerMethod` Manual: laps are set by hand.
/// - A `Track` of `Trackpoint`s, each with its time and `HeartRateBpm`, one per reading taken while the timer ran.
///   Each pause ends a track and the next reading starts a new one, as Garmin's devices write them, so readers
///   that take the time between tracks as stopped time agree with `TotalTimeSeconds`. Readings taken while paused
///   are not written (the CSV file has them). A reading is in the lap it falls in (``RecordingLayout``); one on the
///   line between two laps is in the later one.
/// - `Notes`: the lap's markers, one a line, each as the workout's elapsed time (pauses excluded, `HH:MM:SS`) and
///   its text; line breaks in a text become spaces so each marker stays one line. A marker outside every lap goes
///   to the lap before it.
///
/// Heart rates are whole beats per minute, 1 to 255 (the schema's `positiveByte`): a reading that does not round
/// into that range is no heart rate a strap measured (0 means "none", and no heart beats 256 times a minute), and
/// is left out. Times are UTC to the millisecond (``UTCTime``). Every text from users goes through ``XMLText``.
/// - The activity's `Notes`: `Athlete: ` and the athlete's name, when the workout has one.
///
/// No `Creator` or `Author`: the schema's `Device_t` needs a unit id, product id and version systole's sensors do
/// not have, and its `Application_t` a Garmin part number, and a made-up one would be worse than none.
public enum TCXActivityFile {
    /// TCX's sport for an activity: the schema knows only these three.
    static func sport(_ activity: WorkoutActivityType) -> String {
        switch activity {
        case .running: "Running"
        case .cycling: "Biking"
        default: "Other"
        }
    }

    /// A heart rate as TCX's `positiveByte`, nil when it is none.
    static func bpm(_ value: Double) -> Int? {
        guard value.isFinite else { return nil }
        let rounded = value.rounded()
        return rounded >= 1 && rounded <= 255 ? Int(rounded) : nil
    }

    /// The file's bytes: UTF-8 XML.
    public static func encode(_ recording: ActivityRecording) -> [UInt8] {
        let collected = CollectedBytes()
        // A sink that keeps everything never throws.
        try? write(recording, to: collected.sink)
        return collected.bytes
    }

    /// Writes the file to `sink` a chunk at a time.
    public static func write(_ recording: ActivityRecording, to sink: @escaping ExportSink) throws {
        let layout = RecordingLayout(recording)
        var time = UTCTime()

        // The readings written, lap by lap, in tracks split at every pause.
        var tracks: [[[ActivityRecording.Reading]]] = Array(repeating: [], count: layout.laps.count)
        var previous: (lap: Int, date: Date)?
        for reading in recording.readings.sorted(by: { $0.date < $1.date }) {
            guard bpm(reading.bpm) != nil, !layout.isPaused(at: reading.date),
                let lap = layout.lap(at: reading.date)
            else { continue }
            if let previous, previous.lap == lap, !layout.pauseBegins(after: previous.date, upTo: reading.date) {
                tracks[lap][tracks[lap].count - 1].append(reading)
            } else {
                tracks[lap].append([reading])
            }
            previous = (lap, reading.date)
        }
        var notes: [[String]] = Array(repeating: [], count: layout.laps.count)
        for marker in recording.markers.sorted(by: { $0.date < $1.date }) {
            let oneLine = String(marker.text.map { $0.isNewline ? " " : $0 })
            notes[layout.nearestLap(to: marker.date)].append("\(clock(recording.elapsed(at: marker.date))) \(oneLine)")
        }
        let calories = recording.kilocalories(ofLaps: layout.laps)

        var xml = ExportOutput(sink)
        xml += """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2 \
            http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd">
              <Activities>
                <Activity Sport="\(sport(recording.activity))">
                  <Id>\(time.text(recording.start))</Id>

            """
        func heartRate(_ element: String, _ value: Double, indent: String) {
            guard let value = bpm(value) else { return }
            xml += "\(indent)<\(element)><Value>\(value)</Value></\(element)>\n"
        }
        for (index, lap) in layout.laps.enumerated() {
            let readings = tracks[index].flatMap { $0 }.map(\.bpm)
            xml += "      <Lap StartTime=\"\(time.text(lap.start))\">\n"
            xml += "        <TotalTimeSeconds>\(seconds(recording.timerTime(of: lap)))</TotalTimeSeconds>\n"
            xml += "        <DistanceMeters>0</DistanceMeters>\n"
            if let kilocalories = calories[index] {
                xml += "        <Calories>\(Int(max(0, min(65_535, kilocalories.rounded()))))</Calories>\n"
            }
            if let maximum = readings.max() {
                heartRate("AverageHeartRateBpm", readings.reduce(0, +) / Double(readings.count), indent: "        ")
                heartRate("MaximumHeartRateBpm", maximum, indent: "        ")
            }
            xml += "        <Intensity>Active</Intensity>\n"
            xml += "        <TriggerMethod>Manual</TriggerMethod>\n"
            for track in tracks[index] {
                xml += "        <Track>\n"
                for reading in track {
                    xml += "          <Trackpoint>\n"
                    xml += "            <Time>\(time.text(reading.date))</Time>\n"
                    heartRate("HeartRateBpm", reading.bpm, indent: "            ")
                    xml += "          </Trackpoint>\n"
                }
                xml += "        </Track>\n"
            }
            if !notes[index].isEmpty {
                xml += "        <Notes>\(XMLText.escaped(notes[index].joined(separator: "\n")))</Notes>\n"
            }
            xml += "      </Lap>\n"
        }
        if let athlete = recording.athlete {
            xml += "      <Notes>Athlete: \(XMLText.escaped(athlete))</Notes>\n"
        }
        xml += """
                </Activity>
              </Activities>
            </TrainingCenterDatabase>

            """
        try xml.finish()
    }

    /// Seconds as xsd:double, to the millisecond.
    static func seconds(_ value: TimeInterval) -> String {
        DecimalText.trimmed(max(0, value), maxDecimals: 3) ?? "0"
    }

    /// Elapsed time as `HH:MM:SS` (whole seconds, as the CLI shows it).
    static func clock(_ seconds: TimeInterval) -> String {
        let total = seconds.isFinite ? Int(max(0, min(seconds, 359_999))) : 0
        func two(_ value: Int) -> String { DecimalText.padded(value, width: 2) }
        return "\(two(total / 3600)):\(two(total / 60 % 60)):\(two(total % 60))"
    }
}
