import Foundation
import GRDB

extension SQLiteHealthStore {
    /// When change `sequence` was committed: from the log while it holds the change, or, for the last change
    /// acknowledged, as kept at its acknowledgement; nil when the store does not know it. A replica's position
    /// (its last change and that change's commit time) is checked against it: a store copied to another receiver or
    /// restored from an older backup makes changes with the same sequences at other times.
    public func committedTime(ofChange sequence: Int64) async throws -> Date? {
        try await read("reading the change log") { db in
            if let time = try Double.fetchOne(
                db,
                sql: "SELECT committed FROM changeLog WHERE sequence = ?",
                arguments: [sequence]
            ) {
                return Date(timeIntervalSince1970: time)
            }
            let row = try Row.fetchOne(
                db,
                sql: "SELECT acknowledged, acknowledgedCommitted FROM changeLogState WHERE id = 1"
            )
            guard let row, row["acknowledged"] as Int64 == sequence, let time = row["acknowledgedCommitted"] as Double?
            else { return nil }
            return Date(timeIntervalSince1970: time)
        }
    }

    /// Gives the store a new identity (`storeIdentifier`), for a store found to be a copy: from now on a replica
    /// takes it for a store of its own, and what the original sent stays the original's. Returns the new identity.
    public func takeNewStoreIdentity() async throws -> UUID {
        let identity = UUID()
        try await writeBesideCommits("giving the store a new identity") { db in
            try db.execute(sql: "UPDATE changeLogState SET storeID = ? WHERE id = 1", arguments: [identity])
        }
        return identity
    }
}
