import Foundation
import HealthStore
import Logging
import NIOSSL
import PostgresNIO
import ServiceLifecycle
import Synchronization

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
    /// Changes and samples this run sent.
    public var sentChanges = 0
    public var sentSamples = 0

    public init() {}
}

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

    /// The client's configuration for `settings`.
    public static func clientConfiguration(_ settings: ReplicationSettings) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS = tlsConfiguration(settings).map { .require($0) } ?? .disable
        var configuration = PostgresClient.Configuration(
            host: settings.host,
            port: settings.port,
            username: settings.username,
            password: settings.password,
            database: settings.database,
            tls: tls
        )
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = 1
        configuration.options.connectTimeout = .seconds(10)
        return configuration
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
        let client = PostgresClient(
            configuration: Self.clientConfiguration(settings),
            backgroundLogger: Logger(label: "systoled.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            await cancelWhenGracefulShutdown { await self.replicate(client) }
            group.cancelAll()
        }
    }

    private func replicate(_ client: PostgresClient) async {
        var migrated = false
        var writer: ChangeWriter?
        var acknowledged: Int64 = 0
        /// The last change PostgreSQL has, ahead of `acknowledged` until the next acknowledgement.
        var sent: Int64 = 0
        var lastAcknowledgement = ContinuousClock.now
        var delay: Duration = .seconds(1)
        var lastBacklogCheck = ContinuousClock.now - Self.backlogCheckInterval
        var warnedAge: TimeInterval = 0
        while !Task.isCancelled {
            if ContinuousClock.now - lastBacklogCheck >= Self.backlogCheckInterval {
                lastBacklogCheck = .now
                warnedAge = await checkBacklog(warnedAge: warnedAge)
            }
            do {
                if writer == nil {
                    let storeID = try await store.storeIdentifier()
                    writer = ChangeWriter(storeID: storeID, receiver: settings.receiver, logger: logger)
                    acknowledged = try await store.acknowledgedChange()
                    sent = acknowledged
                }
                if !migrated {
                    let logger = logger
                    let applied = try await Self.withDeadline(Self.answerDeadline) {
                        try await CentralSchema.migrate(client, logger: logger)
                    }
                    migrated = true
                    let migration = applied.isEmpty ? "" : " (schema migrated to version \(applied.last ?? 0))"
                    logger.notice(
                        "replicating to \(settings.displayAddress) as receiver '\(settings.receiver)'\(migration)"
                    )
                }
                let started = ContinuousClock.now
                if sent > acknowledged, started - lastAcknowledgement >= Self.acknowledgementInterval {
                    try await store.acknowledgeChanges(through: sent)
                    acknowledged = sent
                    lastAcknowledgement = started
                }
                let changes = try await store.changes(
                    after: sent,
                    limit: Self.batchChanges,
                    sampleLimit: Self.batchSamples
                )
                guard let writer, !changes.isEmpty else {
                    reached(caughtUp: true)
                    try? await Task.sleep(until: started + Self.batchInterval)
                    continue
                }
                let applied = try await Self.withDeadline(Self.answerDeadline) {
                    try await writer.apply(changes, with: client)
                }
                sent = applied.through
                let full = changes.count >= Self.batchChanges || applied.samples >= Self.batchSamples / 2
                reached(sent: applied, caughtUp: !full)
                delay = .seconds(1)
                // A full batch means more is waiting (catching up): the next goes at once.
                if !full { try? await Task.sleep(until: started + Self.batchInterval) }
            } catch {
                failed(error)
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, Self.maximumRetryDelay)
            }
        }
        // What PostgreSQL has is forgotten before systoled stops (otherwise it would only be sent again).
        if sent > acknowledged { try? await store.acknowledgeChanges(through: sent) }
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

    /// PostgreSQL did not answer within ``answerDeadline``.
    struct NoAnswer: Error, CustomStringConvertible {
        var limit: Duration
        var description: String {
            "no answer within \(limit.components.seconds) s (is PostgreSQL running, and reachable from here?)"
        }
    }

    /// Runs `body`, cancelled (the client gives up its wait for a connection) when it takes longer than `limit`.
    static func withDeadline<T: Sendable>(
        _ limit: Duration,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw NoAnswer(limit: limit) }
            return value
        }
    }

    /// An error in words: PostgreSQL's own message when it sent one, else the connection's.
    public static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let code = error.serverInfo?[.sqlState].map { " (\($0))" } ?? ""
                return "PostgreSQL says: \(message)\(code)"
            }
            if let underlying = error.underlying { return "\(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}
