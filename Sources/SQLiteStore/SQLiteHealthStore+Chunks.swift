import Foundation
import GRDB
import WorkoutKit

extension SQLiteHealthStore {
    /// Hands the samples of a workout to `update` a chunk at a time (series samples unpacked, in no particular
    /// order), so a long workout is never held whole: an export keeps a few bytes of each sample, not the sample.
    /// `update` returns false to stop reading (the workout is larger than the caller takes); the state it left is
    /// returned either way. ``samples(ofWorkout:)`` returns them all at once, in time order.
    public func reduceSamples<State: Sendable>(
        ofWorkout id: UUID,
        into initial: State,
        chunkSize: Int = 4_096,
        _ update: @Sendable @escaping (inout State, [Sample]) -> Bool
    ) async throws -> State {
        try await flush()
        return try await read("reading the samples of workout \(id)") { db in
            let devices = try Self.devices(db)
            var state = initial
            var chunk: [Sample] = []
            chunk.reserveCapacity(chunkSize)
            /// Hands over the chunk when it is full (or `force`); false when `update` wants no more.
            func handOver(force: Bool = false) -> Bool {
                guard chunk.count >= chunkSize || (force && !chunk.isEmpty) else { return true }
                defer { chunk.removeAll(keepingCapacity: true) }
                return update(&state, chunk)
            }
            let readings = try Row.fetchCursor(
                db.cachedStatement(sql: "\(QuantitySeries.selectWithReadings) WHERE s.workoutID = ?"),
                arguments: [id]
            )
            while let row = try readings.next() {
                chunk += try Self.readings(row, devices).map(Sample.quantity)
                guard handOver() else { return state }
            }
            let series = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT uuid, startDate, endDate, deviceID, metadata, beats
                        FROM heartbeatSeries WHERE workoutID = ?
                        """
                ),
                arguments: [id]
            )
            while let row = try series.next() {
                chunk.append(try Self.heartbeatSeries(row, devices))
                guard handOver() else { return state }
            }
            _ = handOver(force: true)
            return state
        }
    }
}
