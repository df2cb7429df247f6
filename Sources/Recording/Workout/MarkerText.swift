import DBus
import Foundation
import SafeText
import WorkoutAnalysis

/// What a marker's text may be (`systole marker TEXT`): it comes from a user, ends up in files other programs read
/// (TCX, CSV) and in every `workouts show`, so it is short, printable and bounded in number.
package enum MarkerText {
    /// The workout event's metadata key that holds the text.
    package static let key = ActivityRecording.markerTextKey
    package static let maximumCharacters = 200
    /// Combining marks make one character of any length, so bytes are bounded too.
    package static let maximumBytes = 800
    package static let maximumPerWorkout = 1000

    /// Why `text` cannot be a marker, or nil.
    package static func refusal(of text: String) -> String? {
        if text.trimmingCharacters(in: .whitespaces).isEmpty { return "a marker needs a text, like 'gel' or 'km 10'" }
        if text.utf8.count > maximumBytes || text.count > maximumCharacters {
            return "a marker's text is at most \(maximumCharacters) characters and \(maximumBytes) bytes "
                + "(this one has \(text.count) and \(text.utf8.count)); shorten it"
        }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{FFFD}" }) {
            return "a marker's text may not hold control characters such as newlines: \(text.quotedExcerpt())"
        }
        return nil
    }
}
