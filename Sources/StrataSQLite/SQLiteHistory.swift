import Foundation
import GRDB
import StrataModel
import StrataStore
import StrataQuery

/// Persistent history in a SQLite store: its tables (in the store's reserved
/// `Z_STRATA_` namespace, so no entity's table can collide) and the
/// statements that write, read and purge them.
///
/// - `Z_STRATA_HISTORY`: one row per committed save; `Z_TOKEN` is an
///   `AUTOINCREMENT` key, so tokens grow and are never reused, even after
///   a purge removed the newest rows.
/// - `Z_STRATA_HISTORY_CHANGE`: one row per changed object (`Z_TYPE` 0 insert,
///   1 update, 2 delete; entity, primary key, version after the save,
///   changed property names joined by commas).
/// - `Z_STRATA_HISTORY_TOMBSTONE`: the preserved attribute values of deleted
///   objects, stored as their columns store them.
/// - `Z_STRATA_HISTORY_CONSUMER`: each consumer's last merged token.
/// - `Z_STRATA_HISTORY_PURGE`: the token up to which history was purged (one row).
///
/// Every statement runs inside the caller's transaction. A group commit's
/// history is written in that group's transaction, for the saves that
/// committed (``Recorder``): a save that rolls back leaves no history.
enum SQLiteHistory {
    static let transactionTable = SQLHistoryTables.transactions
    static let changeTable = SQLHistoryTables.changes
    static let tombstoneTable = SQLHistoryTables.tombstones
    static let consumerTable = SQLHistoryTables.consumers
    static let purgeTable = "Z_STRATA_HISTORY_PURGE"

    static func q(_ identifier: String) -> String { SQLSchema.quote(identifier) }

    /// The tables, created when missing.
    static let createStatements: [String] = [
        "CREATE TABLE IF NOT EXISTS \(q(transactionTable)) (\(q("Z_TOKEN")) INTEGER PRIMARY KEY AUTOINCREMENT, \(q("Z_TIMESTAMP")) REAL NOT NULL, \(q("Z_AUTHOR")) TEXT, \(q("Z_CONTEXT")) TEXT, \(q("Z_PROCESS")) INTEGER NOT NULL, \(q("Z_ORIGIN")) TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS \(q(changeTable)) (\(q("Z_TOKEN")) INTEGER NOT NULL, \(q("Z_SEQ")) INTEGER NOT NULL, \(q("Z_TYPE")) INTEGER NOT NULL, \(q("Z_ENTITY")) TEXT NOT NULL, \(q("Z_KEY")) INTEGER NOT NULL, \(q("Z_VERSION")) INTEGER NOT NULL, \(q("Z_PROPERTIES")) TEXT NOT NULL, PRIMARY KEY (\(q("Z_TOKEN")), \(q("Z_SEQ")))) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS \(q(tombstoneTable)) (\(q("Z_TOKEN")) INTEGER NOT NULL, \(q("Z_SEQ")) INTEGER NOT NULL, \(q("Z_NAME")) TEXT NOT NULL, \(q("Z_VALUE")), PRIMARY KEY (\(q("Z_TOKEN")), \(q("Z_SEQ")), \(q("Z_NAME")))) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS \(q(consumerTable)) (\(q("Z_NAME")) TEXT PRIMARY KEY, \(q("Z_TOKEN")) INTEGER NOT NULL, \(q("Z_UPDATED")) REAL NOT NULL)",
        "CREATE TABLE IF NOT EXISTS \(q(purgeTable)) (\(q("Z_ID")) INTEGER PRIMARY KEY CHECK (\(q("Z_ID")) = 1), \(q("Z_THROUGH")) INTEGER NOT NULL)",
    ]

    /// Whether the store's file has history tables.
    static func exists(_ db: Database) throws -> Bool {
        // Cached statements: a change watcher asks after every commit it sees.
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)"), arguments: [transactionTable]) ?? false
    }

    // MARK: - Recording

    /// The preserved attributes' values of the rows a change set deletes,
    /// read before the deletes run: by index in `changes.deletes`.
    static func tombstones(_ db: Database, deletes: [StoreChanges.Delete], mapping: SQLiteStoreMapping, model: ObjectModel) throws -> [Int: [(String, DatabaseValue)]] {
        var result: [Int: [(String, DatabaseValue)]] = [:]
        for (index, delete) in deletes.enumerated() {
            guard let key = delete.objectID.primaryKey,
                  let entity = mapping.entities[delete.objectID.entityName] else { continue }
            let preserved = entity.attributes.filter { model.attribute(named: $0.name, in: entity.name)?.preserveAfterDeletion == true }
            guard !preserved.isEmpty else { continue }
            let sql = "SELECT " + preserved.map { q($0.column) }.joined(separator: ", ") + " FROM \(q(entity.table)) WHERE \(q("Z_PK")) = ?"
            guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [key]) else { continue }
            var values: [(String, DatabaseValue)] = []
            for (i, attribute) in preserved.enumerated() {
                let value: DatabaseValue = row[i]
                if !value.isNull { values.append((attribute.name, value)) }
            }
            result[index] = values
        }
        return result
    }

    // MARK: - Reading

    /// The last token (0 when history is empty or missing).
    static func currentToken(_ db: Database) throws -> Int64 {
        guard try exists(db) else { return 0 }
        return try newestToken(db)
    }

    /// Made once: change watchers ask for the current token after every
    /// commit they see, and each commit group's history starts from it.
    /// The larger of the `AUTOINCREMENT` sequence (bound: the table's
    /// name) and the table's maximum, in one statement.
    static let newestTokenSQL = "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = ?), 0), "
        + "COALESCE((SELECT MAX(\(q("Z_TOKEN"))) FROM \(q(transactionTable))), 0))"

    /// The token up to which history was purged (0: never).
    static func purgedThrough(_ db: Database) throws -> Int64 {
        guard try exists(db) else { return 0 }
        return try Int64.fetchOne(db.cachedStatement(sql: "SELECT \(q("Z_THROUGH")) FROM \(q(purgeTable)) WHERE \(q("Z_ID")) = 1")) ?? 0
    }

    /// Transactions after `token` up to `through` (inclusive), oldest first,
    /// at most `limit`, skipping those written by `excludingOrigin`.
    /// Throws 134301 when `token` is older than the purge.
    static func transactions(_ db: Database, after token: Int64, through: Int64? = nil, limit: Int, excludingOrigin: String? = nil, storeIdentifier: String, model: ObjectModel, path: String) throws -> [HistoryTransaction] {
        guard try exists(db) else { return [] }
        let purged = try purgedThrough(db)
        let newest = try currentToken(db)
        if token > newest {
            throw StrataError(.invalidValue, "store \(path): history token \(token) is newer than the store's newest transaction (token \(newest)); it was not handed out by this store")
        }
        if token < purged {
            throw StrataError(.historyTokenExpired, "store \(path): history token \(token) has expired: history up to token \(purged) was purged; fetch the objects again and continue from token \(newest)")
        }
        var sql = "SELECT \(q("Z_TOKEN")), \(q("Z_TIMESTAMP")), \(q("Z_AUTHOR")), \(q("Z_CONTEXT")), \(q("Z_PROCESS")), \(q("Z_ORIGIN")) FROM \(q(transactionTable)) WHERE \(q("Z_TOKEN")) > ?"
        var arguments: [(any DatabaseValueConvertible)?] = [token]
        if let through {
            sql += " AND \(q("Z_TOKEN")) <= ?"
            arguments.append(through)
        }
        if let excludingOrigin {
            sql += " AND \(q("Z_ORIGIN")) <> ?"
            arguments.append(excludingOrigin)
        }
        sql += " ORDER BY \(q("Z_TOKEN")) LIMIT ?"
        arguments.append(Int64(max(0, limit)))
        var transactions: [HistoryTransaction] = []
        var positions: [Int64: Int] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments)) {
            let value: Int64 = row[0]
            let seconds: Double = row[1]
            guard seconds.isFinite else {
                throw StrataError(.storeOpen, "store \(path): history transaction \(value) has a timestamp that is not a number (\(seconds))")
            }
            positions[value] = transactions.count
            transactions.append(HistoryTransaction(
                token: HistoryToken(storeIdentifier: storeIdentifier, value: value),
                timestamp: Date(timeIntervalSinceReferenceDate: seconds),
                author: row[2], contextName: row[3],
                processID: Int32(truncatingIfNeeded: row[4] as Int64),
                origin: row[5], changes: []))
        }
        guard let first = transactions.first?.token.value, let last = transactions.last?.token.value else { return [] }

        // Changes and tombstones of the range, kept for the selected transactions.
        var changeIndex: [Int64: [Int64: Int]] = [:]
        let changes = try Row.fetchCursor(db.cachedStatement(sql: "SELECT \(q("Z_TOKEN")), \(q("Z_SEQ")), \(q("Z_TYPE")), \(q("Z_ENTITY")), \(q("Z_KEY")), \(q("Z_VERSION")), \(q("Z_PROPERTIES")) FROM \(q(changeTable)) WHERE \(q("Z_TOKEN")) BETWEEN ? AND ? ORDER BY \(q("Z_TOKEN")), \(q("Z_SEQ"))"), arguments: [first, last])
        while let row = try changes.next() {
            let value: Int64 = row[0]
            guard let position = positions[value] else { continue }
            let type: Int = row[2]
            guard let kind = HistoryChange.Kind(rawValue: type) else {
                throw StrataError(.storeOpen, "store \(path): history change \(value).\(row[1] as Int64) has unknown type \(type)")
            }
            let properties: String = row[6]
            let objectID = ObjectID(storeIdentifier: storeIdentifier, entityName: row[3], key: .permanent(row[4]))
            changeIndex[value, default: [:]][row[1]] = transactions[position].changes.count
            transactions[position].changes.append(HistoryChange(
                kind: kind, objectID: objectID, version: row[5],
                changedProperties: properties.isEmpty ? [] : properties.split(separator: ",").map(String.init)))
        }
        let tombstones = try Row.fetchCursor(db.cachedStatement(sql: "SELECT \(q("Z_TOKEN")), \(q("Z_SEQ")), \(q("Z_NAME")), \(q("Z_VALUE")) FROM \(q(tombstoneTable)) WHERE \(q("Z_TOKEN")) BETWEEN ? AND ?"), arguments: [first, last])
        while let row = try tombstones.next() {
            let value: Int64 = row[0]
            guard let position = positions[value], let index = changeIndex[value]?[row[1]] else { continue }
            let name: String = row[2]
            let entity = transactions[position].changes[index].objectID.entityName
            // An attribute the model no longer has (or no longer preserves as this type) is left out.
            guard let attribute = model.attribute(named: name, in: entity),
                  let decoded = try? SQLiteRowDecoder.propertyValue(row[3], type: attribute.type) else { continue }
            transactions[position].changes[index].tombstone[name] = decoded
        }
        return transactions
    }

    // MARK: - Consumers and purging

    /// Records consumer `name`'s token (never moving it backwards). A token
    /// newer than the store's newest transaction is refused (it would hold
    /// a purge horizon no real consumer reached).
    static func recordConsumer(_ db: Database, name: String, token: Int64, at date: Date, path: String) throws {
        let newest = try currentToken(db)
        guard token <= newest else {
            throw StrataError(.invalidValue, "store \(path): history consumer '\(name)' cannot record token \(token): the store's newest transaction is token \(newest)")
        }
        try db.execute(
            sql: "INSERT INTO \(q(consumerTable)) (\(q("Z_NAME")), \(q("Z_TOKEN")), \(q("Z_UPDATED"))) VALUES (?, ?, ?) ON CONFLICT (\(q("Z_NAME"))) DO UPDATE SET \(q("Z_TOKEN")) = MAX(\(q("Z_TOKEN")), excluded.\(q("Z_TOKEN"))), \(q("Z_UPDATED")) = excluded.\(q("Z_UPDATED"))",
            arguments: [name, token, date.timeIntervalSinceReferenceDate])
    }

    static func consumers(_ db: Database, storeIdentifier: String) throws -> [HistoryConsumer] {
        guard try exists(db) else { return [] }
        return try Row.fetchAll(db, sql: "SELECT \(q("Z_NAME")), \(q("Z_TOKEN")), \(q("Z_UPDATED")) FROM \(q(consumerTable)) ORDER BY \(q("Z_NAME"))").map { row in
            HistoryConsumer(name: row[0], token: HistoryToken(storeIdentifier: storeIdentifier, value: row[1]), updated: Date(timeIntervalSinceReferenceDate: row[2]))
        }
    }

    /// Removes what every live consumer has merged (see
    /// ``HistoryTrackingStore/purgeHistory(maximumAge:)``); answers how many
    /// transactions went and the new horizon.
    static func purge(_ db: Database, maximumAge: TimeInterval, now: Date) throws -> (removed: Int, through: Int64) {
        guard try exists(db) else { return (0, 0) }
        let oldest = now.timeIntervalSinceReferenceDate - maximumAge
        let live = try Int64.fetchOne(db, sql: "SELECT MIN(\(q("Z_TOKEN"))) FROM \(q(consumerTable)) WHERE \(q("Z_UPDATED")) >= ?", arguments: [oldest])
        var horizon: Int64
        if let live {
            horizon = live
        } else {
            horizon = try Int64.fetchOne(db, sql: "SELECT MAX(\(q("Z_TOKEN"))) FROM \(q(transactionTable)) WHERE \(q("Z_TIMESTAMP")) < ?", arguments: [oldest]) ?? 0
        }
        // Never past the newest transaction (a consumer's token cannot be
        // newer, but the file is input): later tokens must stay readable.
        horizon = min(horizon, try currentToken(db))
        let previous = try purgedThrough(db)
        guard horizon > previous else { return (0, previous) }
        try db.execute(sql: "DELETE FROM \(q(tombstoneTable)) WHERE \(q("Z_TOKEN")) <= ?", arguments: [horizon])
        try db.execute(sql: "DELETE FROM \(q(changeTable)) WHERE \(q("Z_TOKEN")) <= ?", arguments: [horizon])
        try db.execute(sql: "DELETE FROM \(q(transactionTable)) WHERE \(q("Z_TOKEN")) <= ?", arguments: [horizon])
        let removed = db.changesCount
        try db.execute(sql: "INSERT INTO \(q(purgeTable)) (\(q("Z_ID")), \(q("Z_THROUGH"))) VALUES (1, ?) ON CONFLICT (\(q("Z_ID"))) DO UPDATE SET \(q("Z_THROUGH")) = excluded.\(q("Z_THROUGH"))", arguments: [horizon])
        return (removed, horizon)
    }

    /// Records a restore (``StoreRestore``) at `token`, past every token
    /// the replaced store and the backup handed out, and purges everything
    /// up to it: every consumer's older token then fails with 134301
    /// (fetch again), instead of reading on as if the restore had not
    /// undone the saves after the backup.
    static func recordRestore(_ db: Database, token: Int64) throws {
        try db.execute(
            sql: "INSERT INTO \(q(transactionTable)) (\(q("Z_TOKEN")), \(q("Z_TIMESTAMP")), \(q("Z_AUTHOR")), \(q("Z_CONTEXT")), \(q("Z_PROCESS")), \(q("Z_ORIGIN"))) VALUES (?, ?, 'restore', NULL, ?, 'restore')",
            arguments: [token, Date().timeIntervalSinceReferenceDate, Int64(getpid())]
        )
        try db.execute(sql: "DELETE FROM \(q(tombstoneTable)) WHERE \(q("Z_TOKEN")) <= ?", arguments: [token])
        try db.execute(sql: "DELETE FROM \(q(changeTable)) WHERE \(q("Z_TOKEN")) <= ?", arguments: [token])
        try db.execute(sql: "DELETE FROM \(q(transactionTable)) WHERE \(q("Z_TOKEN")) <= ?", arguments: [token])
        try db.execute(sql: "INSERT INTO \(q(purgeTable)) (\(q("Z_ID")), \(q("Z_THROUGH"))) VALUES (1, ?) ON CONFLICT (\(q("Z_ID"))) DO UPDATE SET \(q("Z_THROUGH")) = excluded.\(q("Z_THROUGH"))", arguments: [token])
    }
}
