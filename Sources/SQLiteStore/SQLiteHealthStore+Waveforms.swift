import Foundation
import GRDB
import WorkoutKit

extension SQLiteHealthStore {
    /// The ECG (or acceleration) of a workout, oldest first, in samples of up to a minute; a sample with
    /// ``WaveformSample/precededByGap`` follows lost values.
    public func waveforms(_ kind: WaveformSample.Kind, ofWorkout id: UUID) async throws -> [WaveformSample] {
        try await flush()
        return try await read("reading the \(kind.rawValue) of workout \(id)") { db in
            let devices = try Self.devices(db)
            return try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(Waveforms.columns) FROM waveform
                        WHERE workoutID = ? AND kind = ? ORDER BY startDate, id
                        """
                ),
                arguments: [id, kind.rawValue]
            ).map { try Waveforms.sample($0, devices) }
        }
    }

    /// Whether the workout has any ECG (or acceleration), without reading it.
    public func hasWaveforms(_ kind: WaveformSample.Kind, ofWorkout id: UUID) async throws -> Bool {
        try await flush()
        return try await read("looking for the \(kind.rawValue) of workout \(id)") { db in
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM waveform WHERE workoutID = ? AND kind = ? LIMIT 1"),
                arguments: [id, kind.rawValue]
            ) ?? false
        }
    }

    /// The ECG (or acceleration) samples that overlap `start..<end`, of any workout or none, oldest first. Samples
    /// are returned whole: the first may begin before `start` and the last end after `end`.
    public func waveforms(
        _ kind: WaveformSample.Kind,
        from start: Date,
        to end: Date
    ) async throws
        -> [WaveformSample]
    {
        try await flush()
        return try await read("reading the \(kind.rawValue) from \(start) to \(end)") { db in
            let devices = try Self.devices(db)
            // A row lasts at most a minute: rows starting that long before `start` are the earliest to overlap.
            return try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(Waveforms.columns) FROM waveform
                        WHERE kind = ? AND startDate >= ? AND startDate < ? AND endDate > ? ORDER BY startDate, id
                        """
                ),
                arguments: [
                    kind.rawValue, start.timeIntervalSince1970 - Waveforms.rowSeconds - 1,
                    end.timeIntervalSince1970, start.timeIntervalSince1970,
                ]
            ).map { try Waveforms.sample($0, devices) }
        }
    }

    /// Refuses malformed waveforms before they reach the inbox: a row there that cannot be read back would hold up
    /// every sample after it.
    static func checkWaveforms(_ samples: [Sample]) throws(HealthStoreError) {
        for case .waveform(let waveform) in samples where !waveform.isValid {
            throw HealthStoreError(
                .failed,
                "a \(waveform.kind.rawValue) sample of \(waveform.count) values at \(waveform.samplingFrequency) Hz "
                    + "was refused: it needs \(waveform.kind.channelCount) channels of equal, non-zero length, a rate "
                    + "from 1 to 1000 Hz and values within ±\(waveform.kind.limit) \(waveform.kind.unit)"
            )
        }
    }
}
