import BlueZ
import Foundation
import HeartRateProfile
import WorkoutAnalysis
import WorkoutKit

/// Follows each sensor's skin contact during a workout, so the workout keeps when contact was lost (a reading
/// without contact has no heart rate and is not stored: without this, a lost contact and a lost signal would look
/// the same in an export) and whether each sensor reports contact at all.
///
/// A lost contact becomes a marker event over the interval, with the sensor's address under
/// ``ActivityRecording/contactLostKey``, once contact is back (or the workout ends). A sensor anyone may control can
/// flap its contact bit as fast as it may notify, so a workout keeps at most ``maximumEvents``; later losses are
/// counted, not kept.
package struct ContactWatch {
    static let maximumEvents = 1000

    private var lostSince: [String: Date] = [:]
    private(set) var reportsContact: [String: Bool] = [:]
    private(set) var eventCount = 0
    /// Losses not kept because the workout had ``maximumEvents`` already.
    private(set) var dropped = 0

    /// Takes a reading's contact; returns the event of a loss that just ended, if any.
    mutating func observe(address: String, contact: SensorContact, at date: Date) -> WorkoutEvent? {
        reportsContact[address] = contact != .notSupported
        switch contact {
        case .notDetected:
            if lostSince[address] == nil { lostSince[address] = date }
            return nil
        case .detected, .notSupported:
            guard let since = lostSince.removeValue(forKey: address) else { return nil }
            return event(address, from: since, to: date)
        }
    }

    /// The losses still open when the workout ends, closed at `end`.
    mutating func finish(at end: Date) -> [WorkoutEvent] {
        let open = lostSince.sorted { $0.value < $1.value }
        lostSince = [:]
        return open.compactMap { event($0.key, from: $0.value, to: max($0.value, end)) }
    }

    /// The workout metadata that says which sensors report contact.
    var metadata: [String: MetadataValue] {
        Dictionary(
            uniqueKeysWithValues: reportsContact.map { (ActivityRecording.reportsContactKey($0.key), .bool($0.value)) }
        )
    }

    private mutating func event(_ address: String, from start: Date, to end: Date) -> WorkoutEvent? {
        guard eventCount < Self.maximumEvents else {
            dropped += 1
            return nil
        }
        eventCount += 1
        return WorkoutEvent(
            type: .marker,
            start: start,
            end: end,
            metadata: [ActivityRecording.contactLostKey: .string(address)]
        )
    }
}
