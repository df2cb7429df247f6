import Foundation
import GRDB

/// The store's tables, created and upgraded by migrations (each runs once, in order, in a transaction).
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // Devices are deduplicated by their whole description (a JSON key), since UNIQUE ignores NULLs.
            try db.execute(
                sql: """
                    CREATE TABLE device (
                        id INTEGER PRIMARY KEY,
                        key TEXT NOT NULL UNIQUE,
                        name TEXT, address TEXT, manufacturer TEXT, bodyLocation TEXT, firmwareVersion TEXT
                    );
                    CREATE TABLE quantitySample (
                        id INTEGER PRIMARY KEY,
                        uuid BLOB NOT NULL UNIQUE,
                        type TEXT NOT NULL,
                        value REAL NOT NULL,
                        startDate REAL NOT NULL,
                        endDate REAL NOT NULL,
                        count INTEGER NOT NULL,
                        deviceID INTEGER REFERENCES device(id),
                        workoutID BLOB,
                        metadata TEXT
                    );
                    CREATE INDEX quantitySampleByTypeAndStart ON quantitySample(type, startDate);
                    CREATE INDEX quantitySampleByWorkout ON quantitySample(workoutID);
                    CREATE TABLE heartbeatSeries (
                        id INTEGER PRIMARY KEY,
                        uuid BLOB NOT NULL UNIQUE,
                        startDate REAL NOT NULL,
                        endDate REAL NOT NULL,
                        deviceID INTEGER REFERENCES device(id),
                        workoutID BLOB,
                        metadata TEXT,
                        beats BLOB NOT NULL
                    );
                    CREATE INDEX heartbeatSeriesByStart ON heartbeatSeries(startDate);
                    CREATE INDEX heartbeatSeriesByWorkout ON heartbeatSeries(workoutID);
                    CREATE TABLE workout (
                        uuid BLOB PRIMARY KEY,
                        activityType INTEGER NOT NULL,
                        locationType INTEGER NOT NULL,
                        startDate REAL NOT NULL,
                        endDate REAL NOT NULL,
                        duration REAL NOT NULL,
                        body TEXT NOT NULL
                    );
                    CREATE INDEX workoutByStart ON workout(startDate);
                    CREATE TABLE journal (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        body TEXT NOT NULL
                    );
                    """
            )
        }
        migrator.registerMigration("v2-activity-summary") { db in
            // One row per local day (the store's calendar), written only when the builder finishes a workout.
            try db.execute(
                sql: """
                    CREATE TABLE activitySummary (
                        day TEXT PRIMARY KEY,
                        activeEnergy REAL NOT NULL,
                        exerciseMinutes REAL NOT NULL,
                        workouts INTEGER NOT NULL
                    );
                    """
            )
        }
        migrator.registerMigration("v3-anchors") { db in
            // Every insertion and deletion takes the next anchor, so an anchored query returns what changed since
            // the anchor a consumer last saw.
            try db.execute(
                sql: """
                    ALTER TABLE quantitySample ADD COLUMN anchor INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE heartbeatSeries ADD COLUMN anchor INTEGER NOT NULL DEFAULT 0;
                    UPDATE quantitySample SET anchor = id;
                    UPDATE heartbeatSeries SET anchor = id + (SELECT IFNULL(MAX(id), 0) FROM quantitySample);
                    CREATE INDEX quantitySampleByAnchor ON quantitySample(anchor);
                    CREATE INDEX heartbeatSeriesByAnchor ON heartbeatSeries(anchor);
                    CREATE TABLE deletedSample (anchor INTEGER PRIMARY KEY, uuid BLOB NOT NULL, type TEXT NOT NULL);
                    CREATE TABLE anchorCounter (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
                    INSERT INTO anchorCounter VALUES (1,
                        (SELECT IFNULL(MAX(id), 0) FROM quantitySample) + (SELECT IFNULL(MAX(id), 0) FROM heartbeatSeries));
                    """
            )
        }
        migrator.registerMigration("v4-rollups") { db in
            // Quarter-hour roll-ups per type (UTC-aligned; every time zone's offset is a multiple of 15 minutes),
            // so statistics over days, weeks or a year read a few rows per bucket instead of every sample.
            // Samples count in the quarter hour they start in.
            try db.execute(
                sql: """
                    CREATE TABLE rollup (
                        type TEXT NOT NULL,
                        bucket INTEGER NOT NULL,
                        readings INTEGER NOT NULL,
                        total REAL NOT NULL,
                        weighted REAL NOT NULL,
                        minimum REAL NOT NULL,
                        maximum REAL NOT NULL,
                        PRIMARY KEY (type, bucket)
                    ) WITHOUT ROWID;
                    """
            )
            // Migrations are frozen: this is the roll-up of the v4 schema, spelled out here.
            try db.execute(
                sql: """
                    INSERT INTO rollup (type, bucket, readings, total, weighted, minimum, maximum)
                    SELECT type, CAST(startDate / 900 AS INTEGER), SUM(count), SUM(value), SUM(value * count),
                           MIN(value), MAX(value)
                    FROM quantitySample GROUP BY type, CAST(startDate / 900 AS INTEGER)
                    """
            )
        }
        migrator.registerMigration("v5-quantity-series") { db in
            // Heart rate is kept as series samples, one row per type, device, workout and UTC minute (see
            // QuantitySeries); the row carries the readings' minimum and maximum, NULL for a single reading.
            try db.execute(
                sql: """
                    ALTER TABLE quantitySample ADD COLUMN minimum REAL;
                    ALTER TABLE quantitySample ADD COLUMN maximum REAL;
                    CREATE TABLE quantitySeries (
                        sampleID INTEGER PRIMARY KEY REFERENCES quantitySample(id) ON DELETE CASCADE,
                        minute INTEGER NOT NULL,
                        readings BLOB NOT NULL
                    );
                    """
            )
        }
        migrator.registerMigration("v6-series-chunks") { db in
            // The readings a commit adds to a growing series, until the writer folds them into the series row
            // (see QuantitySeries).
            try db.execute(
                sql: """
                    CREATE TABLE quantitySeriesChunk (
                        id INTEGER PRIMARY KEY,
                        sampleID INTEGER NOT NULL REFERENCES quantitySample(id) ON DELETE CASCADE,
                        readings BLOB NOT NULL
                    );
                    CREATE INDEX quantitySeriesChunkBySample ON quantitySeriesChunk(sampleID);
                    """
            )
        }
        migrator.registerMigration("v7-inbox") { db in
            // Samples committed and not yet moved into their tables (see Inbox).
            try db.execute(
                sql: "CREATE TABLE inbox (id INTEGER PRIMARY KEY, workoutID BLOB, samples BLOB NOT NULL)"
            )
        }
        migrator.registerMigration("v8-session-journals") { db in
            // One journal per session in progress (a team session runs one per athlete), in the order first
            // recorded; the single journal of earlier files becomes the first.
            try db.execute(
                sql: """
                    CREATE TABLE sessionJournal (
                        id INTEGER PRIMARY KEY,
                        sessionID TEXT NOT NULL UNIQUE,
                        body TEXT NOT NULL
                    );
                    INSERT INTO sessionJournal (sessionID, body)
                        SELECT json_extract(body, '$.sessionID'), body FROM journal;
                    DROP TABLE journal;
                    """
            )
        }
        migrator.registerMigration("v9-change-log") { db in
            // What a replica has not taken yet (see ChangeLog), and the store's identity. Written only by a store
            // opened with keepsChangeLog.
            try db.execute(
                sql: """
                    CREATE TABLE changeLog (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        kind INTEGER NOT NULL,
                        workoutID BLOB,
                        committed REAL NOT NULL,
                        sampleCount INTEGER NOT NULL,
                        samples BLOB
                    );
                    CREATE TABLE changeLogState (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        storeID BLOB NOT NULL,
                        acknowledged INTEGER NOT NULL DEFAULT 0,
                        droppedSamples INTEGER NOT NULL DEFAULT 0
                    );
                    """
            )
            try db.execute(sql: "INSERT INTO changeLogState (id, storeID) VALUES (1, ?)", arguments: [UUID()])
        }
        migrator.registerMigration("v10-acknowledged-commit-time") { db in
            // When the last acknowledged change was committed: what the replica's position is checked against once
            // the change itself is forgotten (a copied or restored store is told apart by it).
            try db.execute(sql: "ALTER TABLE changeLogState ADD COLUMN acknowledgedCommitted REAL")
        }
        migrator.registerMigration("v11-rollup-latest") { db in
            // Each roll-up keeps its latest reading (the start and end of the one with the latest start, and its
            // value), so a statistic's most recent value reads the roll-ups too. NULL where it is not known (rows
            // of earlier versions, buckets rebuilt after a deletion): the statistics find it in the samples then.
            try db.execute(
                sql: """
                    ALTER TABLE rollup ADD COLUMN latestStart REAL;
                    ALTER TABLE rollup ADD COLUMN latestEnd REAL;
                    ALTER TABLE rollup ADD COLUMN latestValue REAL;
                    """
            )
        }
        migrator.registerMigration("v12-waveforms") { db in
            // ECG and acceleration, in rows of up to a minute (see Waveforms).
            try db.execute(sql: Waveforms.createTable)
        }
        return migrator
    }
}
