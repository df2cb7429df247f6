import Foundation
import Logging
import PostgresNIO
import WorkoutKit

/// Samples of several changes, as columns, written with one statement per table (`unnest` over arrays): a
/// hundred sensors' second of readings is a handful of statements, not hundreds. What repeats from sample to sample
/// (the workout, the type and unit, the device, the commit time) is sent once, and each sample carries its index
/// into those lists: most of a batch's bytes and encoding were those repeated strings.
struct SampleBatch {
    var ids: [UUID] = []
    var values: [Double] = []
    var readings: [Int32] = []
    var starts: [Date] = []
    var ends: [Date] = []
    var sampleKeys = Keys()

    var beatSeries: [UUID] = []
    var beatIndexes: [Int32] = []
    var beatTimes: [Date] = []
    var beatTicks: [Int32] = []
    var beatGaps: [Bool] = []
    var beatKeys = Keys()

    /// Waveform pieces: their values, channel after channel, all in `waveformSamples`, each piece's from
    /// `waveformFirst` to `waveformLast` (from 1, inclusive, as PostgreSQL slices arrays).
    var waveformIDs: [UUID] = []
    var waveformKinds: [String] = []
    var waveformStarts: [Date] = []
    var waveformRates: [Double] = []
    var waveformGaps: [Bool] = []
    var waveformChannels: [Int32] = []
    var waveformFirst: [Int32] = []
    var waveformLast: [Int32] = []
    var waveformSamples: [Int32] = []
    var waveformKeys = Keys()

    /// Per sample (or beat): indexes, from 1 as PostgreSQL's arrays count, into the lists of distinct values.
    struct Keys {
        var workout: [Int32] = []
        var type: [Int32] = []
        var device: [Int32] = []
        var committed: [Int32] = []
        var sequence: [Int64] = []
    }

    /// The distinct values the keys point into.
    var workouts: [String: Int32] = [:]
    var types: [String: Int32] = [:]
    var units: [String] = []
    var devices: [Pair: Int32] = [:]
    var committedDates: [Date: Int32] = [:]

    struct Pair: Hashable {
        var address: String
        var name: String
    }

    var isEmpty: Bool { ids.isEmpty && beatSeries.isEmpty && waveformIDs.isEmpty }

    private static func key<K: Hashable>(_ value: K, in table: inout [K: Int32]) -> Int32 {
        if let key = table[value] { return key }
        let key = Int32(table.count + 1)
        table[value] = key
        return key
    }

    mutating func add(_ samples: [Sample], workoutID: UUID?, committed date: Date, sequence: Int64) {
        let workout = Self.key(workoutID?.uuidString ?? "", in: &workouts)
        let committed = Self.key(date, in: &committedDates)
        for sample in samples {
            switch sample {
            case .quantity(let quantity):
                guard let value = try? quantity.quantity.doubleValue(for: quantity.type.canonicalUnit),
                    value.isFinite
                else { continue }
                let type: Int32
                if let known = types[quantity.type.identifier] {
                    type = known
                } else {
                    type = Self.key(quantity.type.identifier, in: &types)
                    units.append(quantity.type.canonicalUnit.symbol)
                }
                ids.append(quantity.id)
                values.append(value)
                readings.append(Int32(clamping: quantity.count))
                starts.append(Self.asStored(quantity.startDate))
                ends.append(Self.asStored(quantity.endDate))
                sampleKeys.workout.append(workout)
                sampleKeys.type.append(type)
                sampleKeys.device.append(
                    Self.key(
                        Pair(address: quantity.device?.address ?? "", name: quantity.device?.name ?? ""),
                        in: &devices
                    )
                )
                sampleKeys.committed.append(committed)
                sampleKeys.sequence.append(sequence)
            case .heartbeatSeries(let series):
                let device = Self.key(
                    Pair(address: series.device?.address ?? "", name: series.device?.name ?? ""),
                    in: &devices
                )
                let start = Self.asStored(series.startDate)
                for (index, beat) in series.beats.enumerated() {
                    beatSeries.append(series.id)
                    beatIndexes.append(Int32(index))
                    beatTimes.append(start.addingTimeInterval(beat.timeSinceStart))
                    beatTicks.append(Int32(beat.rrTicks))
                    beatGaps.append(beat.precededByGap)
                    beatKeys.workout.append(workout)
                    beatKeys.device.append(device)
                    beatKeys.sequence.append(sequence)
                }
            case .waveform(let waveform):
                guard waveform.isValid else { continue }
                waveformIDs.append(waveform.id)
                waveformKinds.append(waveform.kind.rawValue)
                waveformStarts.append(Self.asStored(waveform.startDate))
                waveformRates.append(waveform.samplingFrequency)
                waveformGaps.append(waveform.precededByGap)
                waveformChannels.append(Int32(waveform.channels.count))
                waveformFirst.append(Int32(waveformSamples.count + 1))
                for channel in waveform.channels { waveformSamples += channel }
                waveformLast.append(Int32(waveformSamples.count))
                waveformKeys.workout.append(workout)
                waveformKeys.device.append(
                    Self.key(
                        Pair(address: waveform.device?.address ?? "", name: waveform.device?.name ?? ""),
                        in: &devices
                    )
                )
                waveformKeys.committed.append(committed)
                waveformKeys.sequence.append(sequence)
            }
        }
    }

    /// A date as the local store gives it back (it keeps seconds since 1970): the central database then holds
    /// the very times the store holds, not ones a fraction of a microsecond away.
    static func asStored(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970)
    }

    /// The lists, in key order.
    private func ordered<K>(_ table: [K: Int32]) -> [K] {
        table.sorted { $0.value < $1.value }.map(\.key)
    }

    /// Writes what was added (of the changes after the last one applied) and empties the batch.
    mutating func write(_ storeID: UUID, _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !isEmpty else { return }
        try await connection.query(statement(storeID), logger: logger)
        self = SampleBatch()
    }

    /// One statement that inserts the samples and beats of the changes after the receiver's last applied one; with
    /// `registering` it does so only when the database is at `position` (else nothing), and then registers the
    /// receiver and moves the position to `through`. It returns the position it found and whether it was the one
    /// expected. A single statement is a transaction of its own: a batch of samples alone takes one round trip.
    func statement(
        _ storeID: UUID,
        registering: (receiver: String, position: ChangeWriter.Position, through: ChangeWriter.Position)? = nil
    ) -> PostgresQuery {
        let workoutList = ordered(workouts)
        let typeList = ordered(types)
        let deviceList = ordered(devices)
        let addresses = deviceList.map(\.address)
        let names = deviceList.map(\.name)
        let committedList = ordered(committedDates)
        let units = units
        let registers = registering != nil
        let receiver = registering?.receiver ?? ""
        let expected = registering?.position.sequence ?? 0
        let expectedCommitted = registering?.position.committed
        let through = registering?.through.sequence ?? 0
        let throughCommitted = registering?.through.committed
        return """
            WITH found AS (
                SELECT coalesce(r.applied_sequence, 0) AS applied, r.applied_committed AS committed
                FROM (SELECT 1) AS one LEFT JOIN systole_receiver r ON r.store_id = \(storeID)
            ), before AS (
                SELECT applied, committed, NOT \(registers) OR applied = 0 OR (applied = \(expected)
                    AND ((committed IS NULL AND \(expectedCommitted)::float8 IS NULL)
                        OR abs(committed - \(expectedCommitted)::float8) < 1e-6)) AS consistent
                FROM found
            ), registration AS (
                INSERT INTO systole_receiver (store_id, name, applied_sequence, applied_committed)
                SELECT \(storeID), \(receiver), \(through), \(throughCommitted)::float8 FROM before
                WHERE \(registers) AND before.consistent
                ON CONFLICT (store_id) DO UPDATE SET name = excluded.name, last_seen = now(),
                    applied_sequence = excluded.applied_sequence, applied_committed = excluded.applied_committed
            ), quantities AS (
                INSERT INTO systole_quantity (id, store_id, workout_id, type, value, unit, readings, start_time,
                    end_time, device_address, device_name, committed_at)
                SELECT s.id, \(storeID), nullif((\(workoutList)::text[])[s.w], '')::uuid, (\(typeList)::text[])[s.t],
                    s.value, (\(units)::text[])[s.t], s.readings, s.start_time, s.end_time,
                    nullif((\(addresses)::text[])[s.d], ''), nullif((\(names)::text[])[s.d], ''),
                    (\(committedList)::timestamptz[])[s.c]
                FROM unnest(\(ids)::uuid[], \(values)::float8[], \(readings)::int4[], \(starts)::timestamptz[],
                    \(ends)::timestamptz[], \(sampleKeys.workout)::int4[], \(sampleKeys.type)::int4[],
                    \(sampleKeys.device)::int4[], \(sampleKeys.committed)::int4[], \(sampleKeys.sequence)::int8[])
                    AS s(id, value, readings, start_time, end_time, w, t, d, c, sequence), before
                WHERE s.sequence > before.applied AND before.consistent
                ON CONFLICT (id) DO NOTHING
            ), beats AS (
                INSERT INTO systole_rr_interval (series_id, index, store_id, workout_id, time, rr_ticks,
                    preceded_by_gap, device_address)
                SELECT b.series, b.index, \(storeID), nullif((\(workoutList)::text[])[b.w], '')::uuid, b.time, b.ticks,
                    b.gap, nullif((\(addresses)::text[])[b.d], '')
                FROM unnest(\(beatSeries)::uuid[], \(beatIndexes)::int4[], \(beatTimes)::timestamptz[],
                    \(beatTicks)::int4[], \(beatGaps)::bool[], \(beatKeys.workout)::int4[], \(beatKeys.device)::int4[],
                    \(beatKeys.sequence)::int8[])
                    AS b(series, index, time, ticks, gap, w, d, sequence), before
                WHERE b.sequence > before.applied AND before.consistent
                ON CONFLICT (series_id, index) DO NOTHING
            ), waveforms AS (
                INSERT INTO systole_waveform (id, store_id, workout_id, kind, start_time, sampling_frequency,
                    preceded_by_gap, channels, samples, device_address, device_name, committed_at)
                SELECT v.id, \(storeID), nullif((\(workoutList)::text[])[v.w], '')::uuid, v.kind, v.start_time, v.rate,
                    v.gap, v.channels, (\(waveformSamples)::int4[])[v.first:v.last],
                    nullif((\(addresses)::text[])[v.d], ''), nullif((\(names)::text[])[v.d], ''),
                    (\(committedList)::timestamptz[])[v.c]
                FROM unnest(\(waveformIDs)::uuid[], \(waveformKinds)::text[], \(waveformStarts)::timestamptz[],
                    \(waveformRates)::float8[], \(waveformGaps)::bool[], \(waveformChannels)::int4[],
                    \(waveformFirst)::int4[], \(waveformLast)::int4[], \(waveformKeys.workout)::int4[],
                    \(waveformKeys.device)::int4[], \(waveformKeys.committed)::int4[], \(waveformKeys.sequence)::int8[])
                    AS v(id, kind, start_time, rate, gap, channels, first, last, w, d, c, sequence), before
                WHERE v.sequence > before.applied AND before.consistent
                ON CONFLICT (id) DO NOTHING
            )
            SELECT applied, committed, consistent FROM before
            """
    }
}
