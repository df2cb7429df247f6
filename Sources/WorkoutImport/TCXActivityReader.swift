import Foundation
import WorkoutKit

/// Reads a TCX file (Garmin's Training Center XML, v2; Garmin Connect, Polar Flow and Strava export it): each
/// activity's sport, laps, trackpoints' heart rate, the calories of its laps and the device that recorded it.
public enum TCXActivityReader {
    /// The largest file read.
    public static let maximumSize = 64 << 20

    /// The activities in `bytes`, or what is wrong with the file.
    public static func read(_ bytes: [UInt8], now: Date = Date()) throws(ImportError) -> [ImportedActivity] {
        guard bytes.count <= maximumSize else {
            throw ImportError("\(bytes.count) bytes is larger than a TCX file can be")
        }
        var events = XMLEvents(bytes)
        var path: [String] = []
        var parts: [TCXActivityParts] = []
        var sawRoot = false
        do {
            while let event = try events.next() {
                switch event {
                case .start(let name, let attributes):
                    if path.isEmpty {
                        guard name == "TrainingCenterDatabase" else {
                            throw ImportError("not a TCX file: its root element is <\(name)>")
                        }
                        sawRoot = true
                    }
                    path.append(name)
                    if name == "Activity", path.count == 3 {
                        guard parts.count < ImportLimits.laps else {
                            throw ImportError("line \(events.line): more than \(ImportLimits.laps) activities")
                        }
                        parts.append(TCXActivityParts(sport: attributes["Sport"], now: now))
                    }
                    if name == "Trackpoint", !parts.isEmpty { parts[parts.count - 1].trackpointTime = nil }
                    if name == "Lap", !parts.isEmpty {
                        try parts[parts.count - 1].lapStarted(at: attributes["StartTime"], line: events.line)
                    }
                case .end:
                    path.removeLast()
                case .text(let text):
                    guard !parts.isEmpty else { continue }
                    try parts[parts.count - 1].take(text, at: path, line: events.line)
                }
            }
        } catch let failure as XMLEvents.Failure {
            throw ImportError("not well-formed XML at \(failure); export it again from the device or service")
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError("\(error)")
        }
        guard sawRoot else { throw ImportError("not a TCX file: no TrainingCenterDatabase element") }
        guard !parts.isEmpty else { throw ImportError("the file holds no activity") }
        var activities: [ImportedActivity] = []
        for (index, part) in parts.enumerated() {
            do {
                activities.append(try part.activity())
            } catch {
                throw ImportError("activity \(index + 1): \(error)")
            }
        }
        return activities
    }
}
