import FITFormat
import Foundation
import SafeText
import WorkoutKit

/// The parts of a FIT activity gathered message by message, each value checked as it comes.
struct FITActivityParts {
    typealias Message = FITActivityReader.Message
    let now: Date
    var fileType: Double?
    var recorder = ImportedActivity.Recorder()
    var sessions: [(sport: Double?, subSport: Double?, start: Date, end: Date, energy: Double?)] = []
    var laps: [DateInterval] = []
    var heartRates: [ImportedActivity.HeartRate] = []
    var rrIntervals: [Double] = []
    /// Timer stops and starts in file order (true: stopped).
    var timer: [(date: Date, stopped: Bool)] = []

    init(now: Date) { self.now = now }

    mutating func take(_ message: FITMessage) throws(ImportError) {
        switch message.global {
        case Message.fileID:
            fileType = message.value(0)
            recorder.manufacturer = message.value(1).map(Self.manufacturer)
            recorder.product =
                message.strings[8].map(UntrustedText.clean)
                ?? message.value(2).map { "product \(Self.whole($0))" }
            recorder.serialNumber = message.value(3).map { String(Self.whole($0)) }
        case Message.deviceInfo where message.value(0) == 0:
            // The creator (device index 0) names itself better here than in the file ID, when it does.
            if let name = message.strings[27] { recorder.product = UntrustedText.clean(name) }
        case Message.session:
            let start = try date(message, field: 2, what: "the session's start")
            let elapsed = message.value(7).map { $0 / 1000 }
            let end = try date(message, field: FITActivityReader.timestamp, what: "the session's end")
            guard let start = start ?? end.map({ $0.addingTimeInterval(-(elapsed ?? 0)) }) else {
                throw where_(message, "a session without a start time")
            }
            let last = max(end ?? start, start.addingTimeInterval(elapsed ?? 0))
            let energy = message.value(11)
            if let energy, !ImportLimits.energy.contains(energy) {
                throw where_(message, "a session's energy of \(Self.whole(energy)) kcal")
            }
            guard sessions.count < ImportLimits.laps else {
                throw where_(message, "more than \(ImportLimits.laps) sessions")
            }
            sessions.append((message.value(5), message.value(6), start, last, energy))
        case Message.lap:
            guard let start = try date(message, field: 2, what: "a lap's start") else { return }
            let elapsed = message.value(7).map { $0 / 1000 } ?? 0
            let end = try date(message, field: FITActivityReader.timestamp, what: "a lap's end")
            guard laps.count < ImportLimits.laps else { throw where_(message, "more than \(ImportLimits.laps) laps") }
            laps.append(DateInterval(start: start, end: max(end ?? start, start.addingTimeInterval(elapsed))))
        case Message.record:
            guard let bpm = message.value(3), bpm != 0,
                let date = try date(message, field: FITActivityReader.timestamp, what: "a record's time")
            else { return }
            guard ImportLimits.heartRate.contains(bpm) else {
                throw where_(
                    message,
                    "a heart rate of \(Self.whole(bpm)) bpm (a heart rate is \(Self.range(ImportLimits.heartRate)))"
                )
            }
            if let previous = heartRates.last?.date, date < previous {
                throw where_(message, "a record earlier than the one before it")
            }
            guard heartRates.count < ImportLimits.heartRates else {
                throw where_(message, "more than \(ImportLimits.heartRates) heart-rate readings")
            }
            heartRates.append(ImportedActivity.HeartRate(date: date, beatsPerMinute: bpm))
        case Message.event where message.value(0) == 0:
            guard let type = message.value(1),
                let date = try date(message, field: FITActivityReader.timestamp, what: "a timer event's time")
            else { return }
            guard timer.count < ImportLimits.timerEvents else {
                throw where_(message, "more than \(ImportLimits.timerEvents) timer stops and starts")
            }
            if type == 0 { timer.append((date, false)) }
            if [1, 4, 8, 9].contains(type) { timer.append((date, true)) }
        case Message.hrv:
            for value in message.fields[0] ?? [] {
                guard let value else { continue }
                let seconds = value.double / 1000
                guard ImportLimits.rrInterval.contains(seconds) else {
                    throw where_(message, "an RR interval of \(seconds) s (\(Self.range(ImportLimits.rrInterval)) s)")
                }
                guard rrIntervals.count < ImportLimits.rrIntervals else {
                    throw where_(message, "more than \(ImportLimits.rrIntervals) RR intervals")
                }
                rrIntervals.append(seconds)
            }
        default:
            return
        }
    }

    /// The activity the parts make.
    func activity() throws(ImportError) -> ImportedActivity {
        if let fileType, fileType != 4 {
            throw ImportError("a FIT file of type \(Self.whole(fileType)), not an activity (4)")
        }
        let start = sessions.map(\.start).min() ?? heartRates.first?.date
        let end = sessions.map(\.end).max() ?? heartRates.last?.date
        guard let start, let end, end > start else {
            throw ImportError("the file holds no session and no timed heart rate: nothing to import")
        }
        guard end.timeIntervalSince(start) <= ImportLimits.duration else {
            throw ImportError("an activity of \(Int(end.timeIntervalSince(start) / 3600)) hours (at most a week)")
        }
        let sports = Set(sessions.map { Self.activity(sport: $0.sport, subSport: $0.subSport) })
        let energies = sessions.compactMap(\.energy)
        return ImportedActivity(
            format: .fit,
            activity: sports.count == 1 ? sports.first! : .other,
            start: start,
            end: end,
            // A device's laps and timer events may run a second past its sessions: they are kept within them.
            pauses: Self.clamped(pauses(until: end), to: start...end),
            laps: Self.clamped(laps, to: start...end),
            heartRates: heartRates.filter { $0.date >= start && $0.date <= end },
            rrIntervals: rrIntervals,
            energyKilocalories: energies.isEmpty ? nil : energies.reduce(0, +),
            recorder: recorder
        )
    }

    /// The parts of `intervals` within `bounds` (those wholly outside dropped).
    static func clamped(_ intervals: [DateInterval], to bounds: ClosedRange<Date>) -> [DateInterval] {
        intervals.compactMap { interval in
            let start = max(interval.start, bounds.lowerBound)
            let end = min(interval.end, bounds.upperBound)
            return start <= end ? DateInterval(start: start, end: end) : nil
        }
    }

    /// The stretches between a timer stop and the next start.
    private func pauses(until end: Date) -> [DateInterval] {
        var pauses: [DateInterval] = []
        var stoppedAt: Date?
        for event in timer.sorted(by: { $0.date < $1.date }) {
            if event.stopped, stoppedAt == nil { stoppedAt = event.date }
            if !event.stopped, let since = stoppedAt {
                if event.date > since { pauses.append(DateInterval(start: since, end: event.date)) }
                stoppedAt = nil
            }
        }
        return pauses
    }

    /// A date field's value, checked; nil when the field has none.
    private func date(_ message: FITMessage, field: UInt8, what: String) throws(ImportError) -> Date? {
        guard let seconds = message.value(field) else { return nil }
        let date = Date(timeIntervalSince1970: seconds + FITActivityReader.epochOffset)
        guard ImportLimits.dates(now: now).contains(date) else {
            // The raw value, not a date: a hostile file's may be far beyond what a calendar formats.
            throw where_(message, "\(what) (\(Self.whole(seconds)) s after 1989-12-31) is before 2000 or in the future")
        }
        return date
    }

    private func where_(_ message: FITMessage, _ problem: String) -> ImportError {
        ImportError("at byte \(message.offset): \(problem)")
    }

    /// A field's value as a whole number for a message or a switch; a hostile file's float fields may hold any
    /// value, which `Int(_:)` would trap on.
    static func whole(_ value: Double) -> Int {
        guard value.isFinite, abs(value) < 1e15 else { return -1 }
        return Int(value)
    }

    static func range(_ range: ClosedRange<Double>) -> String {
        "\(range.lowerBound.formatted())–\(range.upperBound.formatted())"
    }

    /// systole's activity for FIT's sport and sub-sport (the inverse of what the FIT export writes).
    static func activity(sport: Double?, subSport: Double?) -> WorkoutActivityType {
        switch (Self.whole(sport ?? 0), Self.whole(subSport ?? 0)) {
        case (1, _): .running
        case (2, _): .cycling
        case (4, 15): .elliptical
        case (4, 16): .stairClimbing
        case (5, _): .swimming
        case (10, 20): .traditionalStrengthTraining
        case (10, 26): .highIntensityIntervalTraining
        case (10, 43): .yoga
        case (10, _): .crossTraining
        case (11, _): .walking
        case (15, _): .rowing
        case (17, _): .hiking
        default: .other
        }
    }

    /// Manufacturers' names for the FIT profile's numbers people's files carry most.
    static func manufacturer(_ number: Double) -> String {
        switch Self.whole(number) {
        case 1: "Garmin"
        case 32: "Wahoo Fitness"
        case 123: "Polar"
        case 265: "Strava"
        case 294: "Coros"
        case 89: "Tacx"
        case 260: "Zwift"
        case 255: "development"
        default: "manufacturer \(Self.whole(number))"
        }
    }
}
