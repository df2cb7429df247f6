import WorkoutAnalysis

enum TCXActivityFile { static func encode(_ r: ActivityRecording) -> String { "" } }
enum CSVActivityFile { static func encode(_ r: ActivityRecording) -> String { "" } }
enum RRIntervalFile { static func encode(_ r: ActivityRecording) -> String { "" } }
