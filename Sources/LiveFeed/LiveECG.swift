import Synchronization

/// A piece of a sensor's ECG for the live page's strip: as the strap sent it (an H10 frame, about 0.56 s).
public struct LiveECGPiece: Sendable, Equatable {
    /// Counts pieces from 1 as they arrive: the stream's cursor.
    public var sequence: UInt64
    public var sensor: String
    /// The first value's time, seconds since 1970.
    public var start: Double
    public var rate: Double
    public var microvolts: [Int32]
    /// Values before it were lost: the trace breaks here.
    public var gap: Bool

    public init(sequence: UInt64, sensor: String, start: Double, rate: Double, microvolts: [Int32], gap: Bool) {
        self.sequence = sequence
        self.sensor = sensor
        self.start = start
        self.rate = rate
        self.microvolts = microvolts
        self.gap = gap
    }

    /// The piece as the event stream sends it.
    public var json: String {
        var object = JSONObject()
        object.add("sequence", Int(clamping: sequence))
        object.add("sensor", sensor)
        object.add("start", start)
        object.add("rate", rate)
        object.add("uv", json: "[" + microvolts.map(String.init).joined(separator: ",") + "]")
        object.add("gap", gap)
        return object.text
    }
}

/// The last seconds of every sensor's ECG, for the live page's strips: the recording's output stage adds each
/// piece as it is recorded, and each page's stream takes those after its cursor. Bounded: ``keptSeconds`` per
/// sensor, at most ``maximumPieces`` in all.
public final class LiveECG: Sendable {
    /// How much of each sensor's ECG a page that opens gets at once (the strip's width).
    public static let keptSeconds = 6.0
    public static let maximumPieces = 2048

    /// Wakes the streams when pieces arrive.
    public let feed = LiveFeed()
    private let pieces = Mutex<[LiveECGPiece]>([])
    private let lastSequence = Atomic<UInt64>(0)

    public init() {}

    /// Adds pieces (sensor, start, rate, µV, gap) and wakes the streams.
    public func add(_ new: [(sensor: String, start: Double, rate: Double, microvolts: [Int32], gap: Bool)]) {
        guard !new.isEmpty else { return }
        pieces.withLock { pieces in
            for piece in new {
                let sequence = lastSequence.add(1, ordering: .relaxed).newValue
                pieces.append(
                    LiveECGPiece(
                        sequence: sequence,
                        sensor: piece.sensor,
                        start: piece.start,
                        rate: piece.rate,
                        microvolts: piece.microvolts,
                        gap: piece.gap
                    )
                )
            }
            // Each sensor's last seconds: pieces ending before its newest start minus the strip's width go.
            var newest: [String: Double] = [:]
            for piece in pieces { newest[piece.sensor] = max(newest[piece.sensor] ?? piece.start, piece.start) }
            pieces.removeAll { piece in piece.start < (newest[piece.sensor] ?? 0) - Self.keptSeconds }
            if pieces.count > Self.maximumPieces { pieces.removeFirst(pieces.count - Self.maximumPieces) }
        }
        feed.changed()
    }

    /// The pieces after `cursor` (0: all that are kept), oldest first.
    public func pieces(after cursor: UInt64) -> [LiveECGPiece] {
        pieces.withLock { $0.filter { $0.sequence > cursor } }
    }
}
