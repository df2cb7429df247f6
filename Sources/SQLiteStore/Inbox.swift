import Foundation
import GRDB
import WorkoutKit

/// Where the group-commit writer puts samples first: each commit appends one row per workout holding its samples
/// packed in a blob, and every few thousand samples (and before any read) the inbox is folded into the sample
/// tables in one transaction.
///
/// Inserting every sample where it belongs at each commit (a heartbeat row with four indexes, a series update and
/// a chunk) would dirty dozens of pages per commit with a hundred sensors. An inbox row is one insert at the end of
/// one table; folding thousands of samples at once touches each series once and each page once. A save is durable
/// when its inbox row is committed; folding is atomic, so a crash leaves every sample either in the inbox or in its
/// table, never both (leftovers are folded when the store opens).
enum Inbox {
    /// Appends samples (of one workout, or none), packed, as one row.
    static func append(packed: Data, workoutID: UUID?, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO inbox (workoutID, samples) VALUES (?, ?)")
            .execute(arguments: [workoutID, packed])
    }

    /// Moves everything in the inbox into the sample tables, oldest first.
    static func fold(cache: InsertCache?, _ db: Database) throws {
        let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT id, workoutID, samples FROM inbox ORDER BY id"))
        guard let last = rows.last?["id"] as Int64? else { return }
        // One table of names for the whole fold: the rows of a minute repeat the same few devices and types.
        var names = PackedNames()
        var index = rows.startIndex
        while index < rows.endIndex {
            // Consecutive rows of one workout go in together: each insert reads and writes the anchor counter.
            let workoutID = rows[index]["workoutID"] as UUID?
            var samples: [Sample] = []
            while index < rows.endIndex, rows[index]["workoutID"] as UUID? == workoutID {
                do {
                    samples += try unpack(rows[index]["samples"], names: &names)
                } catch {
                    throw Malformed(row: rows[index]["id"] as Int64)
                }
                index += 1
            }
            try SQLiteHealthStore.insert(samples, workoutID: workoutID, cache: cache, db)
        }
        try db.cachedStatement(sql: "DELETE FROM inbox WHERE id <= ?").execute(arguments: [last])
        // Our own deletion: without this the writer's cache took it for someone else's write and started empty at
        // every commit after a move, looking up every device and growing series again.
        cache?.noteOwnWrites(db)
    }

    // MARK: Packing

    /// An inbox row that cannot be read: only something other than systole writes such a row. Until it is gone no
    /// sample can move, so the message says how to get rid of it.
    struct Malformed: Error, CustomStringConvertible {
        var row: Int64
        var description: String {
            "inbox row \(row) cannot be read (something other than systole changed the file). Delete it to lose "
                + "only its samples (sqlite3 on the file: 'DELETE FROM inbox WHERE id = \(row)'), or move the file "
                + "aside to start a new store"
        }
    }

    /// What the reader throws; `fold` names the row.
    fileprivate struct Unreadable: Error {}

    private enum Kind: UInt8 {
        case quantity = 0
        case heartbeatSeries = 1
        case waveform = 2
    }

    /// Samples as bytes: per sample its kind, identifier, dates (bits of seconds since 2001, so they come back
    /// exactly), device, metadata (JSON, rarely any), then the quantity's type, canonical value and count, the
    /// packed beats, or the waveform's kind, rate, gap flag and packed channels.
    static func pack(_ samples: [Sample]) throws -> Data {
        var writer = ByteWriter()
        writer.bytes.reserveCapacity(samples.count * 128)
        for sample in samples {
            switch sample {
            case .quantity(let q):
                writer.byte(Kind.quantity.rawValue)
                try writer.common(q.id, q.startDate, q.endDate, q.device, q.metadata)
                writer.string(q.type.identifier)
                writer.double(try q.quantity.doubleValue(for: q.type.canonicalUnit))
                writer.integer(Int64(q.count))
            case .heartbeatSeries(let h):
                writer.byte(Kind.heartbeatSeries.rawValue)
                try writer.common(h.id, h.startDate, h.endDate, h.device, h.metadata)
                writer.blob(Coding.pack(h.beats))
            case .waveform(let w):
                writer.byte(Kind.waveform.rawValue)
                try writer.common(w.id, w.startDate, w.endDate, w.device, w.metadata)
                writer.byte(w.kind == .electrocardiogram ? 0 : 1)
                writer.double(w.samplingFrequency)
                writer.byte(w.precededByGap ? 1 : 0)
                writer.byte(UInt8(clamping: w.channels.count))
                for channel in w.channels { writer.blob(VoltagePacking.pack(channel)) }
            }
        }
        return Data(writer.bytes)
    }

    /// Unpacks one row, taking devices and types already read from `names` and adding the new ones.
    static func unpack(_ data: Data, names: inout PackedNames) throws -> [Sample] {
        var reader = ByteReader(data: [UInt8](data), names: names)
        // The reader holds the tables alone while it reads, so adding to them copies nothing.
        names = PackedNames()
        defer { names = reader.names }
        var samples: [Sample] = []
        while !reader.isAtEnd {
            guard let kind = Kind(rawValue: try reader.byte()) else { throw Unreadable() }
            let id = try reader.uuid()
            let start = try reader.date()
            let end = try reader.date()
            let device = try reader.cachedDevice()
            let metadataText = try reader.string()
            let metadata =
                metadataText.isEmpty ? [:] : try Coding.decode([String: MetadataValue].self, metadataText)
            switch kind {
            case .quantity:
                guard let type = try reader.quantityType() else { throw Unreadable() }
                let value = try reader.double()
                let count = Int(try reader.integer())
                samples.append(
                    .quantity(
                        QuantitySample(
                            id: id,
                            type: type,
                            quantity: Quantity(value, type.canonicalUnit),
                            start: start,
                            end: end,
                            count: count,
                            device: device,
                            metadata: metadata
                        )
                    )
                )
            case .waveform:
                samples.append(.waveform(try reader.waveform(id: id, start: start, device: device, metadata: metadata)))
            case .heartbeatSeries:
                let beats = Coding.unpack(Data(try reader.bytes()))
                samples.append(
                    .heartbeatSeries(
                        HeartbeatSeriesSample(
                            id: id,
                            start: start,
                            end: end,
                            beats: beats,
                            device: device,
                            metadata: metadata
                        )
                    )
                )
            }
        }
        return samples
    }
}

/// Little-endian fields and length-prefixed strings, appended to a buffer (a byte array: appending to `Data`
/// field by field cost more than the insert).
private struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func integer(_ value: Int64) {
        var bits = UInt64(bitPattern: value)
        for _ in 0..<8 {
            bytes.append(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
        }
    }
    mutating func double(_ value: Double) { integer(Int64(bitPattern: value.bitPattern)) }
    mutating func blob(_ value: some Collection<UInt8>) {
        integer(Int64(value.count))
        bytes.append(contentsOf: value)
    }
    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { blob($0) }
    }
    /// An absent string: length -1.
    mutating func optional(_ value: String?) {
        if let value { string(value) } else { integer(-1) }
    }

    mutating func common(
        _ id: UUID,
        _ start: Date,
        _ end: Date,
        _ device: Device?,
        _ metadata: [String: MetadataValue]
    ) throws {
        withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
        double(start.timeIntervalSinceReferenceDate)
        double(end.timeIntervalSinceReferenceDate)
        if let device {
            byte(1)
            optional(device.name)
            optional(device.address)
            optional(device.manufacturer)
            optional(device.bodyLocation)
            optional(device.firmwareVersion)
        } else {
            byte(0)
        }
        string(metadata.isEmpty ? "" : try Coding.encode(metadata))
    }
}

/// Reads what `ByteWriter` wrote; any overrun is `Inbox.Unreadable`.
private struct ByteReader {
    let data: [UInt8]
    var offset = 0
    var names: PackedNames

    init(data: [UInt8], names: PackedNames) {
        self.data = data
        self.names = names
    }

    var isAtEnd: Bool { offset >= data.count }

    mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= data.count - offset else { throw Inbox.Unreadable() }
        defer { offset += count }
        return data[offset..<offset + count]
    }

    mutating func byte() throws -> UInt8 { try take(1).first! }

    mutating func integer() throws -> Int64 {
        var bits: UInt64 = 0
        for (shift, byte) in try take(8).enumerated() { bits |= UInt64(byte) << (8 * shift) }
        return Int64(bitPattern: bits)
    }

    mutating func double() throws -> Double { Double(bitPattern: UInt64(bitPattern: try integer())) }

    mutating func bytes() throws -> ArraySlice<UInt8> { try take(Int(try integer())) }

    mutating func string() throws -> String { String(decoding: try bytes(), as: UTF8.self) }

    mutating func optional() throws -> String? {
        let length = try integer()
        if length < 0 { return nil }
        return String(decoding: try take(Int(length)), as: UTF8.self)
    }

    mutating func uuid() throws -> UUID {
        let b = Array(try take(16))
        return UUID(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
    }

    mutating func date() throws -> Date { Date(timeIntervalSinceReferenceDate: try double()) }

    /// The device, from the bytes of the one read before when they are the same.
    mutating func cachedDevice() throws -> Device? {
        guard try byte() == 1 else { return nil }
        let start = offset
        for _ in 0..<5 {
            let length = try integer()
            if length > 0 { _ = try take(Int(length)) }
        }
        let raw = data[start..<offset]
        if let known = names.devices[RawBytes(raw)] { return known }
        offset = start
        let device = Device(
            name: try optional(),
            address: try optional(),
            manufacturer: try optional(),
            bodyLocation: try optional(),
            firmwareVersion: try optional()
        )
        names.devices[RawBytes(raw)] = device
        return device
    }

    /// The rest of a waveform sample; one that is not well formed (``WaveformSample/isValid``) is unreadable.
    mutating func waveform(
        id: UUID,
        start: Date,
        device: Device?,
        metadata: [String: MetadataValue]
    ) throws
        -> WaveformSample
    {
        let kind: WaveformSample.Kind = try byte() == 0 ? .electrocardiogram : .acceleration
        let rate = try double()
        let gap = try byte() == 1
        let count = Int(try byte())
        guard count <= 3 else { throw Inbox.Unreadable() }
        var channels: [[Int32]] = []
        for _ in 0..<count {
            guard let values = try? VoltagePacking.unpack(Data(try bytes())) else { throw Inbox.Unreadable() }
            channels.append(values)
        }
        let sample = WaveformSample(
            id: id,
            kind: kind,
            start: start,
            samplingFrequency: rate,
            channels: channels,
            precededByGap: gap,
            device: device,
            metadata: metadata
        )
        guard sample.isValid else { throw Inbox.Unreadable() }
        return sample
    }

    /// A quantity type by its identifier's bytes.
    mutating func quantityType() throws -> QuantityType? {
        let raw = try bytes()
        if let known = names.types[RawBytes(raw)] { return known }
        let type = QuantityType(identifier: String(decoding: raw, as: UTF8.self))
        if let type { names.types[RawBytes(raw)] = type }
        return type
    }
}

/// Devices and types already read, by their bytes: each packed sample names its device and type again, and making
/// their strings anew was most of reading a row back.
struct PackedNames {
    fileprivate var devices: [RawBytes: Device] = [:]
    fileprivate var types: [RawBytes: QuantityType] = [:]
}

/// Bytes as a dictionary key hashed in one call: an `ArraySlice`'s own hash feeds the hasher a byte at a time.
private struct RawBytes: Hashable {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (a: RawBytes, b: RawBytes) -> Bool { a.bytes.elementsEqual(b.bytes) }
}
