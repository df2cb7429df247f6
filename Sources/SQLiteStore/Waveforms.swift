import Foundation
import GRDB
import WorkoutKit

/// How ECG and acceleration are kept: the pieces a sensor streams (a Polar H10's frames, about half a second each)
/// are joined into rows of up to a minute per kind, device and workout, as long as they follow one another (no gap,
/// the same rate within 1 %). A row's channels are packed with ``VoltagePacking`` (about 1.2 bytes a 3-byte ECG
/// value), so an hour of an H10's ECG costs about 0.6 MB instead of the 1.4 MB its raw values take.
///
/// A row keeps the identifier of the first piece it holds, and grows while its minute lasts: a fold that finds the
/// sensor's last row still open extends it (reading back at most a minute of values) and gives it a new anchor.
enum Waveforms {
    /// The longest a row grows.
    static let rowSeconds: Double = 60

    static let createTable = """
        CREATE TABLE waveform (
            id INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            startDate REAL NOT NULL,
            endDate REAL NOT NULL,
            samplingFrequency REAL NOT NULL,
            count INTEGER NOT NULL,
            precededByGap INTEGER NOT NULL,
            deviceID INTEGER REFERENCES device(id),
            workoutID BLOB,
            metadata TEXT,
            channels BLOB NOT NULL,
            anchor INTEGER NOT NULL
        );
        CREATE INDEX waveformByKindAndStart ON waveform(kind, startDate);
        CREATE INDEX waveformByWorkout ON waveform(workoutID, kind);
        CREATE INDEX waveformByAnchor ON waveform(anchor);
        """

    static let columns =
        "uuid, kind, startDate, samplingFrequency, precededByGap, deviceID, metadata, channels, anchor"

    /// Channels as one blob: per channel its packed length (4 bytes, little-endian) and its packed values.
    static func pack(_ channels: [[Int32]]) -> Data {
        var data = Data()
        for channel in channels {
            let packed = VoltagePacking.pack(channel)
            withUnsafeBytes(of: UInt32(packed.count).littleEndian) { data.append(contentsOf: $0) }
            data.append(packed)
        }
        return data
    }

    static func unpack(_ data: Data) throws -> [[Int32]] {
        let bytes = [UInt8](data)
        var channels: [[Int32]] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 4, channels.count < 3 else { throw VoltagePacking.Unreadable(offset: offset) }
            let length = bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            guard length <= bytes.count - offset else { throw VoltagePacking.Unreadable(offset: offset) }
            channels.append(try VoltagePacking.unpack(Data(bytes[offset..<offset + length])))
            offset += length
        }
        return channels
    }

    /// A stored row as a sample.
    static func sample(_ row: Row, _ devices: [Int64: Device]) throws -> WaveformSample {
        guard let kind = WaveformSample.Kind(rawValue: row["kind"]) else {
            throw HealthStoreError(.corrupt, "a waveform row has the unknown kind \(String(describing: row["kind"]))")
        }
        let metadataText: String? = row["metadata"]
        return WaveformSample(
            id: row["uuid"],
            kind: kind,
            start: Date(timeIntervalSince1970: row["startDate"]),
            samplingFrequency: row["samplingFrequency"],
            channels: try unpack(row["channels"]),
            precededByGap: row["precededByGap"],
            device: (row["deviceID"] as Int64?).flatMap { devices[$0] },
            metadata: try metadataText.map { try Coding.decode([String: MetadataValue].self, $0) } ?? [:]
        )
    }

    /// Rows being written by one transaction: pieces that follow one another join the open row of their kind,
    /// device and workout.
    struct Appender {
        struct Key: Hashable {
            var kind: WaveformSample.Kind
            var deviceID: Int64?
            var workoutID: UUID?
        }

        struct Open {
            /// The stored row being extended, if any.
            var rowID: Int64?
            var sample: WaveformSample
            /// Seconds since 1970 of the start and of the end of the last piece.
            var start: Double
            var end: Double

            init(rowID: Int64? = nil, _ sample: WaveformSample) {
                self.rowID = rowID
                self.sample = sample
                start = sample.startDate.timeIntervalSince1970
                end = sample.endDate.timeIntervalSince1970
            }

            /// Whether `piece` continues this row: no gap before it, starting where the row ends (within
            /// ``WaveformSample/placementTolerance``), at the same rate within 1 %, and the row stays within its
            /// minute.
            func continues(with piece: WaveformSample) -> Bool {
                let rate = sample.samplingFrequency
                let pieceStart = piece.startDate.timeIntervalSince1970
                return !piece.precededByGap && metadataMatches(piece)
                    && abs(pieceStart - end) <= max(1.5 / rate, WaveformSample.placementTolerance)
                    && abs(piece.samplingFrequency / rate - 1) < 0.01
                    && piece.endDate.timeIntervalSince1970 - start <= Waveforms.rowSeconds
            }

            private func metadataMatches(_ piece: WaveformSample) -> Bool { piece.metadata == sample.metadata }

            mutating func append(_ piece: WaveformSample) {
                for index in sample.channels.indices { sample.channels[index] += piece.channels[index] }
                end = piece.endDate.timeIntervalSince1970
                // The rate over the whole row, so its last value ends where the last piece did.
                sample.samplingFrequency = Double(sample.count) / (end - start)
            }
        }

        private var open: [Key: Open] = [:]
        private var finished: [(Key, Open)] = []

        mutating func add(_ piece: WaveformSample, deviceID: Int64?, workoutID: UUID?, _ db: Database) throws {
            let key = Key(kind: piece.kind, deviceID: deviceID, workoutID: workoutID)
            if open[key] == nil, let last = try Self.lastRow(key, db), last.continues(with: piece) {
                open[key] = last
            }
            if var current = open[key], current.continues(with: piece) {
                current.append(piece)
                open[key] = current
            } else {
                if let current = open[key] { finished.append((key, current)) }
                open[key] = Open(piece)
            }
        }

        /// The latest row of `key`, if it may still grow (its minute is not over).
        private static func lastRow(_ key: Key, _ db: Database) throws -> Open? {
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT id, \(Waveforms.columns) FROM waveform
                            WHERE workoutID IS ? AND kind = ? AND deviceID IS ? ORDER BY startDate DESC LIMIT 1
                            """
                    ),
                    arguments: [key.workoutID, key.kind.rawValue, key.deviceID]
                )
            else { return nil }
            let sample = try Waveforms.sample(row, [:])
            guard sample.endDate.timeIntervalSince(sample.startDate) < Waveforms.rowSeconds else { return nil }
            return Open(rowID: row["id"], sample)
        }

        /// Writes every row this transaction made or extended.
        mutating func write(anchors: inout AnchorAllocator, _ db: Database) throws {
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO waveform (uuid, kind, startDate, endDate, samplingFrequency, count, precededByGap,
                                          deviceID, workoutID, metadata, channels, anchor)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            )
            let update = try db.cachedStatement(
                sql: """
                    UPDATE waveform SET endDate = ?, samplingFrequency = ?, count = ?, channels = ?, anchor = ?
                    WHERE id = ?
                    """
            )
            for (key, row) in finished + open.map({ ($0.key, $0.value) }) {
                let sample = row.sample
                let channels = Waveforms.pack(sample.channels)
                if let id = row.rowID {
                    try update.execute(arguments: [
                        row.end, sample.samplingFrequency, sample.count, channels, anchors.next(), id,
                    ])
                } else {
                    try insert.execute(arguments: [
                        sample.id, key.kind.rawValue, row.start, row.end, sample.samplingFrequency, sample.count,
                        sample.precededByGap, key.deviceID, key.workoutID,
                        sample.metadata.isEmpty ? nil : try Coding.encode(sample.metadata), channels, anchors.next(),
                    ])
                }
            }
            finished = []
            open = [:]
        }
    }
}
