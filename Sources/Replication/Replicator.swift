import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import SQLiteStore
import ServiceLifecycle
import Synchronization

/// Sends the store's changes to PostgreSQL, in order, exactly once, from its own task: the live pipeline only
/// commits to SQLite (the change log is written in the same transaction) and never waits for PostgreSQL. While
/// PostgreSQL cannot be reached the changes wait in the store, up to the backlog limit, and are sent when it can
/// again; a crash of the receiver loses nothing (the log and the last change acknowledged are in the store, and
/// PostgreSQL keeps the last change it applied, so nothing is applied twice).
public final class Replicator: Service, Sendable {
    public let settings: ReplicationSettings
    private let store: SQLiteHealthStore
    private let logger: Logger
    private let state = Mutex(ReplicationStatus())

    /// How often a batch goes, at most, while the replica keeps up: each batch costs a few thread wakeups and
    /// round trips whatever its size, so a second's changes go together (the lag stays within about a second).
    static let batchInterval: Duration = .seconds(1)
    /// How often the changes PostgreSQL has are forgotten in the store (a write, and a wait for the disk): between
    /// two, a crash only means sending those changes again, which PostgreSQL skips.
    static let acknowledgementInterval: Duration = .seconds(10)
    /// The most changes and samples one batch takes.
    static let batchChanges = 2000
    static let batchSamples = 20_000
    /// How often the backlog is checked against its limit and its age reported.
    static let backlogCheckInterval: Duration = .seconds(10)
    /// How long a batch may take: the client waits for a connection without end while PostgreSQL is away, and
    /// replication must say that it is.
    static let answerDeadline: Duration = .seconds(10)
    /// Retries after a failure: from 1 s, doubling, at most this.
    static let maximumRetryDelay: Duration = .seconds(30)

    public init(settings: ReplicationSettings, store: SQLiteHealthStore, logger: Logger) {
        self.settings = settings
        self.store = store
        self.logger = logger
    }

    /// How replication is doing now.
    public var status: ReplicationStatus { state.withLock { $0 } }

    /// The largest message taken from the server: its answers to a receiver are a few bytes (a sequence, a
    /// command's tag) and its errors a few hundred, so a longer one is hostile or not PostgreSQL.
    static let largestServerMessage = 1 << 20

    /// Where and how to connect for `settings`.
    static func endpoint(_ settings: ReplicationSettings, limits: ServerMessageLimits) -> GuardedConnection.Endpoint {
        GuardedConnection.Endpoint(
            host: settings.host,
            port: settings.port,
            username: settings.username,
            password: settings.password,
            database: settings.database,
            tls: tlsConfiguration(settings),
            limits: limits
        )
    }

    /// TLS as `settings` asks for it: none, without checking the certificate (`require`), or checked against the
    /// CA file or the system's certificates and the host name (`verify-full`).
    static func tlsConfiguration(_ settings: ReplicationSettings) -> TLSConfiguration? {
        switch settings.tls {
        case .disable:
            return nil
        case .require:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            return configuration
        case .verifyFull:
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let caFile = settings.caFile { configuration.trustRoots = .file(caFile) }
            return configuration
        }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.replicate() }
    }

    /// Connects, within ``answerDeadline``.
    private func connect() async throws -> PostgresConnection {
        let endpoint = Self.endpoint(
            settings,
            limits: .init(largestMessage: Self.largestServerMessage, authentication: settings.authentication)
        )
        let logger = Logger(label: "systoled.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
        return try await Self.withDeadline(Self.answerDeadline) {
            try await GuardedConnection.connect(endpoint, id: 1, logger: logger)
        }
    }

    /// Where replication is, from round to round.
    private struct Progress {
        var connection: PostgresConnection?
        var migrated = false
        var writer: ChangeWriter?
        /// The last change the store has forgotten (PostgreSQL has it).
        var acknowledged: Int64 = 0
        /// PostgreSQL's position: ahead of `acknowledged` until the next acknowledgement.
        var position = ChangeWriter.Position.start
        var lastAcknowledgement = ContinuousClock.now
    }

    private func replicate() async {
        var progress = Progress()
        var delay: Duration = .seconds(1)
        var lastBacklogCheck = ContinuousClock.now - Self.backlogCheckInterval
        var warnedAge: TimeInterval = 0
        while !Task.isCancelled {
            if ContinuousClock.now - lastBacklogCheck >= Self.backlogCheckInterval {
                lastBacklogCheck = .now
                // What PostgreSQL has is forgotten first: trimming must not take the change its position names.
                if progress.position.sequence > progress.acknowledged,
                    (try? await store.acknowledgeChanges(through: progress.position.sequence)) != nil
                {
                    progress.acknowledged = progress.position.sequence
                    progress.lastAcknowledgement = .now
                }
                warnedAge = await checkBacklog(warnedAge: warnedAge)
            }
            let started = ContinuousClock.now
            do {
                let full = try await round(&progress)
                delay = .seconds(1)
                // A full batch means more is waiting (catching up): the next goes at once.
                if !full { try? await Task.sleep(until: started + Self.batchInterval) }
            } catch {
                // A copy takes its own identity and goes on at once; if the store cannot take it (a full disk), that
                // failure is reported and retried with the backoff, like any other.
                var reported = error
                if let mismatch = error as? ChangeWriter.PositionMismatch {
                    do {
                        try await takeNewIdentity(&progress, mismatch)
                        continue
                    } catch {
                        reported = error
                    }
                }
                failed(reported)
                // After any failure the connection starts again: whatever the server or the network did, nothing
                // of it is left half done (an open transaction, a row stream).
                if let link = progress.connection {
                    progress.connection = nil
                    try? await link.close()
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, Self.maximumRetryDelay)
            }
        }
        if let link = progress.connection { try? await link.close() }
        // What PostgreSQL has is forgotten before systoled stops (otherwise it would only be sent again).
        if progress.position.sequence > progress.acknowledged {
            try? await store.acknowledgeChanges(through: progress.position.sequence)
        }
    }

    /// One round: connects when there is no connection, then sends a batch if anything waits. Returns whether the
    /// batch was full (more is waiting).
    private func round(_ progress: inout Progress) async throws -> Bool {
        let writer: ChangeWriter
        if let known = progress.writer {
            writer = known
        } else {
            writer = ChangeWriter(
                storeID: try await store.storeIdentifier(),
                receiver: settings.receiver,
                logger: logger
            )
            progress.writer = writer
            progress.acknowledged = try await store.acknowledgedChange()
            progress.position = ChangeWriter.Position(sequence: progress.acknowledged, committed: nil)
        }
        let link: PostgresConnection
        if let connection = progress.connection {
            link = connection
        } else {
            link = try await connect()
            progress.connection = link
            if !progress.migrated {
                let logger = logger
                let applied = try await Self.withDeadline(Self.answerDeadline, closing: link) {
                    try await CentralSchema.migrate(link, logger: logger)
                }
                progress.migrated = true
                let migration = applied.isEmpty ? "" : " (schema migrated to version \(applied.last ?? 0))"
                logger.notice(
                    "replicating to \(settings.displayAddress) as receiver '\(settings.receiver)'\(migration)"
                )
            }
            progress.position = try await claim(writer, link, from: progress)
        }
        let now = ContinuousClock.now
        if progress.position.sequence > progress.acknowledged,
            now - progress.lastAcknowledgement >= Self.acknowledgementInterval
        {
            try await store.acknowledgeChanges(through: progress.position.sequence)
            progress.acknowledged = progress.position.sequence
            progress.lastAcknowledgement = now
        }
        let changes = try await store.changes(
            after: progress.position.sequence,
            limit: Self.batchChanges,
            sampleLimit: Self.batchSamples
        )
        guard !changes.isEmpty else {
            reached(caughtUp: true)
            return false
        }
        let position = progress.position
        let applied = try await Self.withDeadline(Self.answerDeadline, closing: link) {
            try await writer.apply(changes, after: position, with: link)
        }
        progress.position = applied.through
        let full = changes.count >= Self.batchChanges || applied.samples >= Self.batchSamples / 2
        reached(sent: applied, caughtUp: !full)
        return full
    }

    /// PostgreSQL's position for this store, checked against the store: it must be a change the store made (the
    /// same sequence committed at the same time), or none. Otherwise the store is a copy (another receiver's SD
    /// card, an older backup) of one that replicated further, and ``ChangeWriter/PositionMismatch`` is thrown.
    private func claim(
        _ writer: ChangeWriter,
        _ link: PostgresConnection,
        from progress: Progress
    ) async throws -> ChangeWriter.Position {
        guard
            let found = try await Self.withDeadline(
                Self.answerDeadline,
                closing: link,
                { try await writer.position(with: link) }
            ),
            found.sequence > 0
        else { return progress.position }
        guard let committed = found.committed else {
            // Written by a systole that kept no commit times: taken as it is.
            return found
        }
        let local = try await store.committedTime(ofChange: found.sequence)
        guard ChangeWriter.Position.same(local?.timeIntervalSince1970, committed) else {
            throw ChangeWriter.PositionMismatch(expected: progress.position, found: found)
        }
        return found
    }

    /// The store is a copy: it gets an identity of its own, and replicates from its own position as a new store.
    /// What the original sent stays the original's; what this store made since it was copied is sent under the
    /// new identity (rows both have, by their identifiers, are not written twice).
    /// Throws when the store cannot take it.
    private func takeNewIdentity(_ progress: inout Progress, _ mismatch: ChangeWriter.PositionMismatch) async throws {
        let identity = try await store.takeNewStoreIdentity()
        progress.writer = ChangeWriter(storeID: identity, receiver: settings.receiver, logger: logger)
        progress.position = ChangeWriter.Position(sequence: progress.acknowledged, committed: nil)
        state.withLock { $0.storeCopied = Date() }
        logger.error(
            "this store was copied from another receiver's or restored from an older backup: \(mismatch). It now replicates as a new store (\(identity.uuidString.lowercased())), from its own changes not yet in PostgreSQL; what the original sent stays under the original"
        )
    }

    /// A successful round: logs the way back when there was a problem.
    private func reached(sent: ChangeWriter.Applied? = nil, caughtUp: Bool = false) {
        let previous = state.withLock { status in
            let problem = status.problem
            status.connected = true
            status.problem = nil
            status.caughtUp = caughtUp
            if caughtUp {
                status.waitingChanges = 0
                status.waitingSamples = 0
                status.oldestWaiting = nil
            }
            if let sent {
                status.sentChanges += sent.changes
                status.sentSamples += sent.samples
            }
            return problem
        }
        if previous != nil { logger.notice("PostgreSQL at \(settings.displayAddress) is reachable again; sending") }
    }

    /// A failed round: logged once per distinct reason; the changes wait in the store.
    private func failed(_ error: any Error) {
        let reason = Self.describe(error)
        let previous = state.withLock { status in
            let problem = status.problem
            status.connected = false
            status.caughtUp = false
            status.problem = reason
            return problem
        }
        if previous != reason {
            logger.warning(
                "cannot replicate to \(settings.displayAddress): \(reason). Changes wait in the store and are sent once it answers (retrying every few seconds)"
            )
        }
    }

    /// Looks at what is waiting: warns as it ages (at 1 minute, then each time the age doubles), and trims it to
    /// the limit. Returns the age warned about.
    private func checkBacklog(warnedAge: TimeInterval) async -> TimeInterval {
        do {
            let dropped = try await store.trimChanges(keepingSamples: settings.backlogLimit)
            let backlog = try await store.changeBacklog()
            state.withLock { status in
                status.waitingChanges = backlog.changes
                status.waitingSamples = backlog.samples
                status.oldestWaiting = backlog.oldest
                status.droppedSamples = backlog.droppedSamples
            }
            if dropped > 0 {
                logger.error(
                    "the replication backlog passed its limit of \(settings.backlogLimit) samples: the \(dropped) oldest were left out of PostgreSQL (they stay in this receiver's store). Raise backlog_limit in [replication], or bring PostgreSQL back sooner"
                )
            }
            let age = backlog.oldest.map { -$0.timeIntervalSinceNow } ?? 0
            if age >= 60, age >= warnedAge * 2 {
                let share = backlog.samples * 100 / max(1, settings.backlogLimit)
                logger.warning(
                    "replication is \(Int(age)) s behind: \(backlog.samples) samples in \(backlog.changes) changes wait for PostgreSQL (\(share) % of the backlog limit)"
                )
                return age
            }
            return age < 60 ? 0 : warnedAge
        } catch {
            logger.warning("the replication backlog could not be read: \(error)")
            return warnedAge
        }
    }
}
