import Logging
import PostgresNIO

/// The central database's tables and views, created and upgraded by numbered migrations. Each runs once, in a
/// transaction, under an advisory lock, so receivers starting together do not race; a migration never changes
/// after it ships. The tables and views are documented in docs/scale-out.md.
public enum CentralSchema {
    /// The lock every receiver takes while it migrates (any number would do; this one spells "systole").
    static let lockKey: Int64 = 0x7379_7374_6F6C_65

    /// The newest version this systole knows.
    public static var currentVersion: Int { migrations.count }

    /// Each migration's statements (the extended protocol postgres-nio speaks takes one statement at a time).
    static let migrations: [[String]] = [
        // 1: receivers, workouts, samples, RR intervals, and the views people query.
        [
            """
            CREATE TABLE systole_receiver (
                store_id uuid PRIMARY KEY,
                name text NOT NULL,
                applied_sequence bigint NOT NULL DEFAULT 0,
                first_seen timestamptz NOT NULL DEFAULT now(),
                last_seen timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE systole_workout (
                id uuid PRIMARY KEY,
                store_id uuid NOT NULL REFERENCES systole_receiver (store_id),
                athlete text,
                team_session uuid,
                activity text NOT NULL,
                location text NOT NULL,
                start_time timestamptz NOT NULL,
                end_time timestamptz NOT NULL,
                duration_s double precision NOT NULL,
                body jsonb NOT NULL
            )
            """,
            """
            CREATE INDEX systole_workout_by_start ON systole_workout (start_time)
            """,
            """
            CREATE INDEX systole_workout_by_athlete ON systole_workout (athlete, start_time)
            """,
            """
            CREATE TABLE systole_quantity (
                id uuid PRIMARY KEY,
                store_id uuid NOT NULL REFERENCES systole_receiver (store_id),
                workout_id uuid,
                type text NOT NULL,
                value double precision NOT NULL,
                unit text NOT NULL,
                readings integer NOT NULL,
                start_time timestamptz NOT NULL,
                end_time timestamptz NOT NULL,
                device_address text,
                device_name text,
                committed_at timestamptz NOT NULL,
                replicated_at timestamptz NOT NULL DEFAULT clock_timestamp()
            )
            """,
            """
            CREATE INDEX systole_quantity_by_workout ON systole_quantity (workout_id, start_time)
            """,
            """
            CREATE INDEX systole_quantity_by_type ON systole_quantity (type, start_time)
            """,
            """
            CREATE TABLE systole_rr_interval (
                series_id uuid NOT NULL,
                index integer NOT NULL,
                store_id uuid NOT NULL REFERENCES systole_receiver (store_id),
                workout_id uuid,
                time timestamptz NOT NULL,
                rr_ticks integer NOT NULL,
                preceded_by_gap boolean NOT NULL,
                device_address text,
                PRIMARY KEY (series_id, index)
            )
            """,
            """
            CREATE INDEX systole_rr_interval_by_workout ON systole_rr_interval (workout_id, time)
            """,
            """
            CREATE VIEW systole_workouts AS
                SELECT w.id, r.name AS receiver, w.athlete, w.team_session, w.activity, w.location, w.start_time,
                    w.end_time, w.duration_s,
                    hr.readings AS heart_rate_readings, hr.average AS average_bpm, hr.maximum AS maximum_bpm
                FROM systole_workout w
                JOIN systole_receiver r ON r.store_id = w.store_id
                LEFT JOIN LATERAL (
                    SELECT count(*) AS readings, avg(q.value) AS average, max(q.value) AS maximum
                    FROM systole_quantity q WHERE q.workout_id = w.id AND q.type = 'heartRate'
                ) hr ON true
            """,
            """
            CREATE VIEW systole_heart_rate_per_minute AS
                SELECT q.workout_id, w.athlete, r.name AS receiver, date_trunc('minute', q.start_time) AS minute,
                    avg(q.value) AS average_bpm, min(q.value) AS minimum_bpm, max(q.value) AS maximum_bpm,
                    count(*) AS readings
                FROM systole_quantity q
                JOIN systole_receiver r ON r.store_id = q.store_id
                LEFT JOIN systole_workout w ON w.id = q.workout_id
                WHERE q.type = 'heartRate'
                GROUP BY q.workout_id, w.athlete, r.name, date_trunc('minute', q.start_time)
            """,
            """
            CREATE VIEW systole_rr_intervals AS
                SELECT i.workout_id, w.athlete, i.time, i.rr_ticks * 1000.0 / 1024 AS rr_ms, i.preceded_by_gap,
                    i.device_address
                FROM systole_rr_interval i
                LEFT JOIN systole_workout w ON w.id = i.workout_id
            """,
        ],
        // 2: when the receiver's last applied change was committed in its store (seconds since 1970): with the
        // sequence, the receiver's position, which a copied or restored store cannot match.
        ["ALTER TABLE systole_receiver ADD COLUMN applied_committed double precision"],
        // 3: ECG and acceleration, a row per piece as the strap sent it (an H10's frame), values channel after
        // channel.
        [
            """
            CREATE TABLE systole_waveform (
                id uuid PRIMARY KEY,
                store_id uuid NOT NULL REFERENCES systole_receiver (store_id),
                workout_id uuid,
                kind text NOT NULL,
                start_time timestamptz NOT NULL,
                sampling_frequency double precision NOT NULL,
                preceded_by_gap boolean NOT NULL,
                channels integer NOT NULL,
                samples integer[] NOT NULL,
                device_address text,
                device_name text,
                committed_at timestamptz NOT NULL
            )
            """,
            """
            CREATE INDEX systole_waveform_by_workout ON systole_waveform (workout_id, kind, start_time)
            """,
        ],
    ]

    /// Brings the database up to ``currentVersion``; returns the versions it applied. A database newer than this
    /// systole is an error (an older receiver must not write into a schema it does not know).
    @discardableResult
    public static func migrate(_ connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await inTransaction(connection, logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS systole_migration (
                    version integer PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                logger: logger
            )
            var current = 0
            for try await version in try await connection.query(
                "SELECT coalesce(max(version), 0) FROM systole_migration",
                logger: logger
            ).decode(Int.self) {
                current = version
            }
            guard current <= migrations.count else {
                throw SchemaTooNew(found: current, known: migrations.count)
            }
            var applied: [Int] = []
            for version in (current + 1)..<(migrations.count + 1) {
                for statement in migrations[version - 1] {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO systole_migration (version) VALUES (\(version))",
                    logger: logger
                )
                applied.append(version)
            }
            return applied
        }
    }

    /// The database was migrated by a newer systole.
    public struct SchemaTooNew: Error, CustomStringConvertible {
        public var found: Int
        public var known: Int
        public var description: String {
            "the central database's schema is version \(found), newer than this systole knows (\(known)): "
                + "update systole on this receiver"
        }
    }
}
