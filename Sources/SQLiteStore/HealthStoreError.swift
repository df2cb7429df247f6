import GRDB

/// Why the store could not do something. Nothing stored before is lost: every write is one transaction.
public struct HealthStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// The disk (or its quota) is full.
        case diskFull
        /// The file cannot be opened or written (permissions, read-only file system, missing folder).
        case cannotOpen
        /// The file is not a systole store, or is damaged.
        case corrupt
        /// What was asked for is not in the store.
        case notFound
        /// Anything else SQLite reported.
        case failed
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Maps an SQLite error, naming the store's path and what to do.
    init(_ error: any Error, path: String, doing: String) {
        if let error = error as? HealthStoreError {
            self = error
            return
        }
        guard let sqlite = error as? DatabaseError else {
            self.init(.failed, "\(doing) in \(path) failed: \(error)")
            return
        }
        switch sqlite.resultCode {
        case .SQLITE_FULL:
            self.init(
                .diskFull,
                "\(doing) failed: the disk holding \(path) is full. Free some space; what was stored before is intact"
            )
        case .SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_AUTH:
            self.init(
                .cannotOpen,
                "\(doing) failed: cannot open or write \(path) (\(sqlite.message ?? "\(sqlite.resultCode)")). "
                    + "Check that its folder exists and is writable"
            )
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            self.init(
                .corrupt,
                "\(doing) failed: \(path) is not a systole store or is damaged (\(sqlite.message ?? "")). "
                    + "Move it aside; systole starts a new one"
            )
        default:
            self.init(.failed, "\(doing) in \(path) failed: \(sqlite.message ?? "\(sqlite.resultCode)")")
        }
    }

    public var description: String { message }
}
