import FITFormat
import Foundation

/// An activity file of either format, told apart by its content (not its name).
public enum ActivityFile {
    /// The largest file read (64 MiB: a week of one-second records is about 10 MB as FIT, 60 MB as TCX).
    public static let maximumSize = FITDecoder.maximumSize

    /// The activities in a FIT or TCX file's bytes, or what is wrong with it.
    public static func read(_ bytes: [UInt8], now: Date = Date()) throws(ImportError) -> [ImportedActivity] {
        let activities = try activities(in: bytes, now: now)
        // What only the whole shows (and the readers' checks again, in one place systoled shares).
        try ImportedActivity.check(activities, now: now)
        return activities
    }

    private static func activities(in bytes: [UInt8], now: Date) throws(ImportError) -> [ImportedActivity] {
        guard bytes.count <= maximumSize else {
            throw ImportError("a file of \(bytes.count >> 20) MiB; activity files are at most \(maximumSize >> 20) MiB")
        }
        if bytes.count >= 12, Array(bytes[8..<12]) == Array(".FIT".utf8) {
            return [try FITActivityReader.read(bytes, now: now)]
        }
        if bytes.starts(with: [0x1F, 0x8B]) {
            throw ImportError("a gzip file (as Strava's export holds them): unpack it first with gunzip")
        }
        let start = bytes.drop { [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }.first
        if start == UInt8(ascii: "<") { return try TCXActivityReader.read(bytes, now: now) }
        throw ImportError(
            "neither a FIT nor a TCX file: systole imports the activity files Garmin Connect, Polar Flow, Strava and the devices themselves export in those formats"
        )
    }
}
