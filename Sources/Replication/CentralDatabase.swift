import Foundation
import Logging
import NIOCore
import PostgresNIO
import SQLiteStore
import WorkoutKit

/// The central database read back: every receiver's workouts, their samples and statistics, as `systole
/// workouts`, `workouts show`, `stats` and `export` take them with `--database`.
public struct CentralDatabase: Sendable {
    /// A workout and the receiver that recorded it.
    public struct Entry: Sendable {
        public var workout: Workout
        public var receiver: String
    }

    /// A statistics bucket (`systole stats`): the readings' count, and their average, minimum and maximum, or sum.
    public struct Bucket: Sendable {
        public var start: Date
        public var end: Date
        public var count: Int
        public var average: Double?
        public var minimum: Double?
        public var maximum: Double?
        public var sum: Double?
    }

    private let connection: PostgresConnection

    /// The largest message taken from the server (a row: a workout's JSON is a few hundred KiB at most), and the
    /// most taken over one command: a hostile server cannot make `systole` gather more.
    static let largestMessage = 16 << 20
    static let largestAnswer = 512 << 20
    private let logger: Logger

    /// Connects for the length of `body`: one connection, which fails at once when PostgreSQL refuses it (a pool
    /// would keep trying); the whole is given at most 30 s.
    public static func with<T: Sendable>(
        _ address: PostgresAddress,
        password: String?,
        body: @escaping @Sendable (CentralDatabase) async throws -> T
    ) async throws -> T {
        let settings = ReplicationSettings(
            host: address.host,
            port: address.port,
            username: address.username ?? "systole",
            password: address.password ?? password,
            database: address.database ?? address.username ?? "systole",
            tls: address.tls,
            caFile: address.caFile,
            authentication: address.authentication,
            receiver: ""
        )
        let logger = Logger(label: "systole.database", factory: { _ in SwiftLogNoOpLogHandler() })
        let endpoint = Replicator.endpoint(
            settings,
            limits: .init(largestMessage: largestMessage, total: largestAnswer, authentication: settings.authentication)
        )
        return try await Replicator.withDeadline(Replicator.answerDeadline * 3) {
            let connection = try await GuardedConnection.connect(endpoint, id: 1, logger: logger)
            do {
                let result = try await body(CentralDatabase(connection: connection, logger: logger))
                try? await connection.close()
                return result
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }

    /// Finished workouts, oldest first, of one athlete or all, and the rows that could not be read (a body that
    /// is not a workout, or one that fails ``problem(with:)``): one bad row does not hide the others.
    public func workouts(athlete: String? = nil, idPrefix: String? = nil) async throws -> Listing {
        var listing = Listing(entries: [], unreadable: [])
        // As the local store takes a prefix: dashes or not, hex only, at most the 32 digits of a UUID. Anything
        // else matches nothing (dropping the rest would turn "xyz" into every workout).
        let prefix = (idPrefix ?? "").replacingOccurrences(of: "-", with: "").lowercased()
        guard prefix.count <= 32, prefix.allSatisfy(\.isHexDigit) else { return listing }
        let rows = try await query(
            """
            SELECT w.id::text, w.body::text, r.name FROM systole_workout w JOIN systole_receiver r USING (store_id)
            WHERE (\(athlete)::text IS NULL OR w.athlete = \(athlete))
              AND replace(w.id::text, '-', '') LIKE \(prefix + "%")
            ORDER BY w.start_time, w.id
            """
        )
        for try await (id, body, receiver) in rows.decode((String, String, String).self) {
            let workout: Workout
            do {
                workout = try WorkoutJSON.decode(body)
            } catch {
                listing.unreadable.append(Unreadable(id: id, receiver: receiver, reason: "its body is not a workout"))
                continue
            }
            if let problem = Self.problem(with: workout) {
                listing.unreadable.append(Unreadable(id: id, receiver: receiver, reason: problem))
            } else {
                listing.entries.append(Entry(workout: workout, receiver: receiver))
            }
        }
        return listing
    }

    /// A workout's ECG (or acceleration), in time order, as the receivers sent it (a piece per strap frame).
    /// Pieces that are not well formed (``WaveformSample/isValid``) are left out.
    public func waveforms(_ kind: WaveformSample.Kind, ofWorkout id: UUID) async throws -> [WaveformSample] {
        let rows = try await query(
            """
            SELECT id, start_time, sampling_frequency, preceded_by_gap, channels, samples, device_address, device_name
            FROM systole_waveform WHERE workout_id = \(id) AND kind = \(kind.rawValue) ORDER BY start_time, id
            """
        )
        var waveforms: [WaveformSample] = []
        for try await (pieceID, start, rate, gap, channelCount, samples, address, name) in rows.decode(
            (UUID, Date, Double, Bool, Int, [Int32], String?, String?).self
        ) {
            guard (1...3).contains(channelCount), samples.count % channelCount == 0 else { continue }
            let length = samples.count / channelCount
            let channels = (0..<channelCount).map { Array(samples[$0 * length..<($0 + 1) * length]) }
            let waveform = WaveformSample(
                id: pieceID,
                kind: kind,
                start: start,
                samplingFrequency: rate,
                channels: channels,
                precededByGap: gap,
                device: Self.device(address, name)
            )
            if waveform.isValid { waveforms.append(waveform) }
        }
        return waveforms
    }

    /// A workout's samples: its quantities, and its beats as heartbeat series (one per series, as recorded).
    public func samples(ofWorkout id: UUID) async throws -> [Sample] {
        var samples: [Sample] = []
        let quantities = try await query(
            """
            SELECT id, type, value, readings, start_time, end_time, device_address, device_name
            FROM systole_quantity WHERE workout_id = \(id) ORDER BY start_time, id
            """
        )
        for try await (sampleID, typeName, value, count, start, end, address, name) in quantities.decode(
            (UUID, String, Double, Int, Date, Date, String?, String?).self
        ) {
            guard let type = QuantityType(identifier: typeName), Self.isUsable(value, readings: count) else { continue }
            samples.append(
                .quantity(
                    QuantitySample(
                        id: sampleID,
                        type: type,
                        quantity: Quantity(value, type.canonicalUnit),
                        start: start,
                        end: end,
                        count: max(1, count),
                        device: Self.device(address, name)
                    )
                )
            )
        }
        var series: [(id: UUID, address: String?, beats: [(time: Date, ticks: Int, gap: Bool)])] = []
        let beats = try await query(
            """
            SELECT series_id, time, rr_ticks, preceded_by_gap, device_address
            FROM systole_rr_interval WHERE workout_id = \(id) ORDER BY time, series_id, index
            """
        )
        for try await (seriesID, time, ticks, gap, address) in beats.decode((UUID, Date, Int, Bool, String?).self) {
            if series.last?.id == seriesID {
                series[series.count - 1].beats.append((time, ticks, gap))
            } else {
                series.append((seriesID, address, [(time, ticks, gap)]))
            }
        }
        for entry in series {
            guard let first = entry.beats.first?.time, let last = entry.beats.last?.time else { continue }
            samples.append(
                .heartbeatSeries(
                    HeartbeatSeriesSample(
                        id: entry.id,
                        start: first,
                        end: last,
                        beats: entry.beats.map {
                            .init(
                                timeSinceStart: $0.time.timeIntervalSince(first),
                                rrTicks: UInt16(clamping: $0.ticks),
                                precededByGap: $0.gap
                            )
                        },
                        device: Self.device(entry.address, nil)
                    )
                )
            )
        }
        return samples
    }

    /// Statistics of `type` in buckets of `interval` seconds from `from` (PostgreSQL's `date_bin`), of one
    /// athlete's workouts or every sample.
    public func statistics(
        of type: QuantityType,
        from: Date,
        to: Date,
        interval: TimeInterval,
        athlete: String? = nil
    ) async throws -> [Bucket] {
        let seconds = Int(interval)
        let rows = try await query(
            """
            SELECT date_bin(make_interval(secs => \(seconds)), q.start_time, \(from)) AS bucket,
                sum(q.readings), sum(q.value * q.readings) / nullif(sum(q.readings), 0), min(q.value), max(q.value),
                sum(q.value)
            FROM systole_quantity q LEFT JOIN systole_workout w ON w.id = q.workout_id
            WHERE q.type = \(type.identifier) AND q.start_time >= \(from) AND q.start_time < \(to)
              AND (\(athlete)::text IS NULL OR w.athlete = \(athlete))
            GROUP BY bucket ORDER BY bucket
            """
        )
        var buckets: [Bucket] = []
        let cumulative = type.aggregationStyle == .cumulative
        for try await (start, count, average, minimum, maximum, sum) in rows.decode(
            (Date, Int, Double?, Double?, Double?, Double?).self
        ) {
            buckets.append(
                Bucket(
                    start: start,
                    end: start.addingTimeInterval(interval),
                    count: count,
                    average: cumulative ? nil : average,
                    minimum: cumulative ? nil : minimum,
                    maximum: cumulative ? nil : maximum,
                    sum: cumulative ? sum : nil
                )
            )
        }
        return buckets
    }

    private func query(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        do {
            return try await connection.query(query, logger: logger)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" {
            throw QueryFailed(
                description: "the database has no systole tables: no receiver has replicated into it yet (see "
                    + "[replication] in systoled.toml on the receivers)"
            )
        } catch {
            throw QueryFailed(description: Replicator.describe(error))
        }
    }

    /// A query failed: PostgreSQL's words, or the connection's.
    public struct QueryFailed: Error, CustomStringConvertible {
        public var description: String
    }

    private static func device(_ address: String?, _ name: String?) -> Device? {
        address == nil && name == nil ? nil : Device(name: name, address: address)
    }
}
