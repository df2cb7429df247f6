import FITFormat
import Foundation
import WorkoutKit

/// Reads a FIT activity file (Garmin, Polar, Wahoo, Coros, and what Strava hands back): its session, laps, records'
/// heart rate, HRV messages' RR intervals, timer events and the device that recorded it.
public enum FITActivityReader {
    // Message and field numbers of the FIT SDK profile (21.218).
    enum Message {
        static let fileID: UInt16 = 0
        static let session: UInt16 = 18
        static let lap: UInt16 = 19
        static let record: UInt16 = 20
        static let event: UInt16 = 21
        static let deviceInfo: UInt16 = 23
        static let hrv: UInt16 = 78
        static let all: Set<UInt16> = [fileID, session, lap, record, event, deviceInfo, hrv]
    }
    static let timestamp: UInt8 = 253
    /// Seconds from the Unix epoch to FIT's (1989-12-31T00:00:00Z).
    static let epochOffset: TimeInterval = 631_065_600

    /// The activity in `bytes`, or what is wrong with the file.
    public static func read(_ bytes: [UInt8], now: Date = Date()) throws(ImportError) -> ImportedActivity {
        var reading = FITActivityParts(now: now)
        // The first refusal stops the taking; the decoder still checks the rest of the file.
        var refusal: ImportError?
        do {
            try FITDecoder.forEachMessage(in: bytes, wanted: Message.all) { message in
                guard refusal == nil else { return }
                do throws(ImportError) { try reading.take(message) } catch { refusal = error }
            }
        } catch {
            throw ImportError("not a readable FIT file (\(error)); export it again from the device or service")
        }
        if let refusal { throw refusal }
        return try reading.activity()
    }
}
