import Foundation

/// How replication is doing, for `systole status` and /metrics.
public struct ReplicationStatus: Sendable, Equatable {
    /// Whether the last attempt reached PostgreSQL.
    public var connected = false
    /// Why the last attempt failed, while it does.
    public var problem: String?
    /// Changes and samples waiting, and when the oldest was committed.
    public var waitingChanges = 0
    public var waitingSamples = 0
    public var oldestWaiting: Date?
    /// Samples left out of the replica because the backlog passed its limit (they stay in the local store).
    public var droppedSamples = 0
    /// Whether the last look at the store found nothing waiting and PostgreSQL was reached: everything committed
    /// before it is in the central database.
    public var caughtUp = false
    /// When this run found the store to be a copy of one that replicated further (another receiver's, an older
    /// backup) and gave it an identity of its own.
    public var storeCopied: Date?
    /// Changes and samples this run sent.
    public var sentChanges = 0
    public var sentSamples = 0

    public init() {}
}
