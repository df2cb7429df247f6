import SafeText

extension DaemonConfiguration {
    /// When the store's commits reach the disk (`[store] sync`).
    public enum StoreSync: String, Sendable, Equatable {
        /// Each tick's readings are committed at once (a crash or kill of systoled loses none) and synced to the
        /// disk at most a second later; a workout's start, pause, resume, lap and end are synced at once. A power
        /// cut loses at most the last second of readings, never the store.
        case second
        /// Every commit is synced before its readings reach the live log: a power cut loses at most the readings
        /// of the tick being committed, for about ten disk syncs a second with many sensors.
        case commit
    }

    static let storeKeys = ["path", "sync"]

    /// A `[store]` entry. The path may also be the top-level `store = "…"` of earlier configurations, but not both.
    mutating func applyStore(_ entry: TOML.Entry) throws(Reason) {
        switch entry.key {
        case "path":
            storePath = try Self.path(try string(entry), "path in [store]")
        case "sync":
            let text = try string(entry)
            guard let sync = StoreSync(rawValue: text) else {
                throw Reason(
                    "sync in [store] must be \"second\" (synced to the disk at most a second after each commit) or "
                        + "\"commit\" (every commit synced), not \(text.quotedExcerpt())"
                )
            }
            storeSync = sync
        default:
            throw Reason(
                "unknown setting \(entry.key.quotedExcerpt()) in [store]; known: \(Self.storeKeys.joined(separator: ", "))"
            )
        }
    }

    /// The top-level `store = "…"` and a `[store]` table are one name used twice: TOML forbids it.
    static func storeProblem(_ entries: [TOML.Entry]) -> (line: Int, reason: String)? {
        guard let path = entries.first(where: { $0.table == "" && $0.key == "store" }),
            let table = entries.first(where: { $0.table == "store" })
        else { return nil }
        return (
            max(path.line, table.line),
            "'store' is set both as a path (line \(path.line)) and as the [store] table (line \(table.line)); "
                + "write the path as path = \"…\" in [store]"
        )
    }
}
