import Foundation
import Logging
import PostgresNIO
import StrataModel
import StrataQuery
import StrataStore

/// Persistent history in a PostgreSQL store: the SQLite store's tables
/// (`Z_STRATA_HISTORY…`, in the store's schema) with PostgreSQL's types,
/// and the statements that write, read and purge them.
///
/// Tokens are handed out from the one row of `Z_STRATA_HISTORY_STATE`
/// (`Z_LAST`), updated by each save just before it commits: the row stays
/// locked until the commit, so tokens are committed in the order they are
/// handed out, by every server. A reader that has seen token n never
/// meets a transaction below n committed later (which a sequence, whose
/// values commit in any order, would allow), and `Z_LAST` is the newest
/// committed token. The lock covers only the history rows, the NOTIFY and
/// the commit; PostgreSQL serialises the commits of notifying
/// transactions anyway.
///
/// Each committed group of saves then notifies the store's channel
/// (``channel(storeIdentifier:)``) with its last token: a wake-up for the
/// other servers' ``PostgresChangeWatcher``s, which read the history itself.
enum PostgresHistory {
    static let transactionTable = SQLHistoryTables.transactions
    static let changeTable = SQLHistoryTables.changes
    static let tombstoneTable = SQLHistoryTables.tombstones
    static let consumerTable = SQLHistoryTables.consumers
    static let stateTable = "Z_STRATA_HISTORY_STATE"

    static func q(_ identifier: String) -> String { SQLSchema.quote(identifier) }

    /// The tables and the state row.
    static let createStatements: [String] = [
        "CREATE TABLE \(q(transactionTable)) (\(q("Z_TOKEN")) bigint PRIMARY KEY, \(q("Z_TIMESTAMP")) double precision NOT NULL, \(q("Z_AUTHOR")) text, \(q("Z_CONTEXT")) text, \(q("Z_PROCESS")) bigint NOT NULL, \(q("Z_ORIGIN")) text NOT NULL)",
        "CREATE TABLE \(q(changeTable)) (\(q("Z_TOKEN")) bigint NOT NULL, \(q("Z_SEQ")) bigint NOT NULL, \(q("Z_TYPE")) smallint NOT NULL, \(q("Z_ENTITY")) text NOT NULL, \(q("Z_KEY")) bigint NOT NULL, \(q("Z_VERSION")) bigint NOT NULL, \(q("Z_PROPERTIES")) text NOT NULL, PRIMARY KEY (\(q("Z_TOKEN")), \(q("Z_SEQ"))))",
        "CREATE TABLE \(q(tombstoneTable)) (\(q("Z_TOKEN")) bigint NOT NULL, \(q("Z_SEQ")) bigint NOT NULL, \(q("Z_NAME")) text NOT NULL, \(q("Z_INTEGER")) bigint, \(q("Z_REAL")) double precision, \(q("Z_DECIMAL")) numeric, \(q("Z_TEXT")) text, \(q("Z_BYTES")) bytea, \(q("Z_UUID")) uuid, PRIMARY KEY (\(q("Z_TOKEN")), \(q("Z_SEQ")), \(q("Z_NAME"))))",
        "CREATE TABLE \(q(consumerTable)) (\(q("Z_NAME")) text PRIMARY KEY, \(q("Z_TOKEN")) bigint NOT NULL, \(q("Z_UPDATED")) double precision NOT NULL)",
        "CREATE TABLE \(q(stateTable)) (\(q("Z_ID")) smallint PRIMARY KEY CHECK (\(q("Z_ID")) = 1), \(q("Z_LAST")) bigint NOT NULL, \(q("Z_THROUGH")) bigint NOT NULL)",
        "INSERT INTO \(q(stateTable)) (\(q("Z_ID")), \(q("Z_LAST")), \(q("Z_THROUGH"))) VALUES (1, 0, 0)",
    ]

    /// The channel a store's saves are announced on: `strata_` and the
    /// store's UUID in lower-case hex digits (a plain identifier).
    static func channel(storeIdentifier: String) -> String {
        "strata_" + storeIdentifier.lowercased().filter { $0.isHexDigit }
    }

    /// The tombstone column holding a value of `type`.
    static func tombstoneColumn(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: "Z_INTEGER"
        case .double, .float, .date: "Z_REAL"
        case .decimal: "Z_DECIMAL"
        case .string, .uri, .objectID: "Z_TEXT"
        case .uuid: "Z_UUID"
        case .binary, .transformable, .undefined, .composite: "Z_BYTES"
        }
    }

    // MARK: - Recording

    /// A committed save to record.
    struct Entry {
        var changes: StoreChanges
        var commit: StoreCommit
        var tombstones: [Int: [(String, AttributeType, PropertyValue)]]
    }

    /// Records committed change sets, one history transaction each, in
    /// order, inside the group's database transaction: the tokens in one
    /// update of the state row, the rows in multi-row INSERTs. Answers the
    /// last token.
    @discardableResult
    static func record(_ runner: PostgresStatementRunner, _ entries: [Entry], origin: String) async throws -> Int64 {
        let next = "UPDATE \(q(stateTable)) SET \(q("Z_LAST")) = \(q("Z_LAST")) + $1 WHERE \(q("Z_ID")) = 1 RETURNING \(q("Z_LAST"))"
        guard let last = try await runner.run(next, [.integer(Int64(entries.count))]).first?.first?.decode(Int64.self) else {
            throw StrataError(.storeSave, "the store's history state row is missing")
        }
        let timestamp = Date().timeIntervalSinceReferenceDate
        let process = Int64(getpid())
        var transactionRows: [[SQLValue]] = []
        var rows: [[SQLValue]] = []
        var tombstoneRows: [[SQLValue]] = []
        func names(_ values: PropertyValues, _ toMany: [String: [ObjectID]]) -> String {
            (values.keys + toMany.keys).sorted().joined(separator: ",")
        }
        for (offset, entry) in entries.enumerated() {
            let token = last - Int64(entries.count) + 1 + Int64(offset)
            let changes = entry.changes
            transactionRows.append([.integer(token), .real(timestamp), changes.author.map(SQLValue.text) ?? .null,
                                    changes.contextName.map(SQLValue.text) ?? .null, .integer(process), .text(origin)])
            var sequence: Int64 = 0
            func add(_ kind: HistoryChange.Kind, _ id: ObjectID, version: Int64, properties: String) {
                guard let key = id.primaryKey else { return }
                sequence += 1
                rows.append([.integer(token), .integer(sequence), .integer(Int64(kind.rawValue)), .text(id.entityName), .integer(key), .integer(version), .text(properties)])
            }
            for (insert, permanent) in zip(changes.inserts, entry.commit.insertedIDs) {
                add(.insert, permanent, version: 1, properties: names(insert.values, insert.toMany))
            }
            for update in changes.updates {
                guard let version = entry.commit.updatedVersions[update.objectID] else { continue }
                add(.update, update.objectID, version: version, properties: names(update.values, update.toMany))
            }
            for (index, delete) in changes.deletes.enumerated() {
                add(.delete, delete.objectID, version: 0, properties: "")
                for (name, type, value) in entry.tombstones[index] ?? [] {
                    var row: [SQLValue] = [.integer(token), .integer(sequence), .text(name)]
                    let stored = SQLValueCoding.sqlValue(for: value)
                    for column in ["Z_INTEGER", "Z_REAL", "Z_DECIMAL", "Z_TEXT", "Z_BYTES", "Z_UUID"] {
                        row.append(column == tombstoneColumn(type) ? stored : .null)
                    }
                    tombstoneRows.append(row)
                }
            }
        }
        try await insertRows(runner, table: transactionTable, columns: ["Z_TOKEN", "Z_TIMESTAMP", "Z_AUTHOR", "Z_CONTEXT", "Z_PROCESS", "Z_ORIGIN"], rows: transactionRows)
        try await insertRows(runner, table: changeTable, columns: ["Z_TOKEN", "Z_SEQ", "Z_TYPE", "Z_ENTITY", "Z_KEY", "Z_VERSION", "Z_PROPERTIES"], rows: rows)
        try await insertRows(runner, table: tombstoneTable, columns: ["Z_TOKEN", "Z_SEQ", "Z_NAME", "Z_INTEGER", "Z_REAL", "Z_DECIMAL", "Z_TEXT", "Z_BYTES", "Z_UUID"], rows: tombstoneRows)
        return last
    }

    /// Notifies the store's channel that transactions up to `token` are
    /// recorded (delivered when the database transaction commits).
    static func notify(_ runner: PostgresStatementRunner, storeIdentifier: String, token: Int64) async throws {
        try await runner.run("SELECT pg_notify($1, $2)", [.text(channel(storeIdentifier: storeIdentifier)), .text(String(token))])
    }

    /// Multi-row INSERTs of `rows`, below PostgreSQL's parameter limit.
    private static func insertRows(_ runner: PostgresStatementRunner, table: String, columns: [String], rows: [[SQLValue]]) async throws {
        guard let width = rows.first?.count else { return }
        let perStatement = max(1, PostgresSaveTransaction.maximumBindings / width)
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(rows.count, start + perStatement)]
            start = chunk.endIndex
            var values: [SQLValue] = []
            var tuples: [String] = []
            for row in chunk {
                let first = values.count + 1
                values += row
                tuples.append("(" + (first..<(first + row.count)).map { "$\($0)" }.joined(separator: ", ") + ")")
            }
            try await runner.run("INSERT INTO \(q(table)) (\(columns.map(q).joined(separator: ", "))) VALUES \(tuples.joined(separator: ", "))", values)
        }
    }

    // MARK: - Reading

    /// The newest committed token and the purge horizon.
    static func state(_ runner: PostgresStatementRunner) async throws -> (last: Int64, through: Int64) {
        guard let row = try await runner.run("SELECT \(q("Z_LAST")), \(q("Z_THROUGH")) FROM \(q(stateTable)) WHERE \(q("Z_ID")) = 1", []).first else {
            throw StrataError(.storeOpen, "the store's history state row is missing")
        }
        return (try row[0].decode(Int64.self), try row[1].decode(Int64.self))
    }

    /// Transactions after `token` up to `through`, oldest first, at most
    /// `limit`, skipping those written by `excludingOrigin`. Throws 134301
    /// when `token` is older than the purge horizon, and
    /// ``StrataError/Code/invalidValue`` when it is newer than the newest.
    static func transactions(_ runner: PostgresStatementRunner, after token: Int64?, through: Int64? = nil, limit: Int, excludingOrigin: String? = nil,
                             storeIdentifier: String, model: ObjectModel, place: String) async throws -> [HistoryTransaction] {
        let (newest, purged) = try await state(runner)
        let token = token ?? purged
        if token > newest {
            throw StrataError(.invalidValue, "\(place): history token \(token) is newer than the store's newest transaction (token \(newest)); it was not handed out by this store")
        }
        if token < purged {
            throw StrataError(.historyTokenExpired, "\(place): history token \(token) has expired: history up to token \(purged) was purged; fetch the objects again and continue from token \(newest)")
        }
        var sql = "SELECT \(q("Z_TOKEN")), \(q("Z_TIMESTAMP")), \(q("Z_AUTHOR")), \(q("Z_CONTEXT")), \(q("Z_PROCESS")), \(q("Z_ORIGIN")) FROM \(q(transactionTable)) WHERE \(q("Z_TOKEN")) > $1"
        var arguments: [SQLValue] = [.integer(token)]
        if let through {
            arguments.append(.integer(through))
            sql += " AND \(q("Z_TOKEN")) <= $\(arguments.count)"
        }
        if let excludingOrigin {
            arguments.append(.text(excludingOrigin))
            sql += " AND \(q("Z_ORIGIN")) <> $\(arguments.count)"
        }
        arguments.append(.integer(Int64(max(0, limit))))
        sql += " ORDER BY \(q("Z_TOKEN")) LIMIT $\(arguments.count)"
        var transactions: [HistoryTransaction] = []
        var positions: [Int64: Int] = [:]
        for row in try await runner.run(sql, arguments) {
            let value = try row[0].decode(Int64.self)
            positions[value] = transactions.count
            transactions.append(HistoryTransaction(
                token: HistoryToken(storeIdentifier: storeIdentifier, value: value),
                timestamp: Date(timeIntervalSinceReferenceDate: try row[1].decode(Double.self)),
                author: try row[2].decode(String?.self), contextName: try row[3].decode(String?.self),
                processID: Int32(truncatingIfNeeded: try row[4].decode(Int64.self)),
                origin: try row[5].decode(String.self), changes: []))
        }
        guard !transactions.isEmpty else { return [] }
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(Array(positions.keys))
        var changeIndex: [Int64: [Int64: Int]] = [:]
        let changes = try await runner.run(PostgresQuery(unsafeSQL: "SELECT \(q("Z_TOKEN")), \(q("Z_SEQ")), \(q("Z_TYPE")), \(q("Z_ENTITY")), \(q("Z_KEY")), \(q("Z_VERSION")), \(q("Z_PROPERTIES")) FROM \(q(changeTable)) WHERE \(q("Z_TOKEN")) = ANY($1) ORDER BY \(q("Z_TOKEN")), \(q("Z_SEQ"))", binds: bindings))
        for row in changes {
            let value = try row[0].decode(Int64.self)
            guard let position = positions[value] else { continue }
            let sequence = try row[1].decode(Int64.self)
            let type = Int(try row[2].decode(Int16.self))
            guard let kind = HistoryChange.Kind(rawValue: type) else {
                throw StrataError(.storeOpen, "\(place): history change \(value).\(sequence) has unknown type \(type)")
            }
            let properties = try row[6].decode(String.self)
            let objectID = ObjectID(storeIdentifier: storeIdentifier, entityName: try row[3].decode(String.self), key: .permanent(try row[4].decode(Int64.self)))
            changeIndex[value, default: [:]][sequence] = transactions[position].changes.count
            transactions[position].changes.append(HistoryChange(
                kind: kind, objectID: objectID, version: try row[5].decode(Int64.self),
                changedProperties: properties.isEmpty ? [] : properties.split(separator: ",").map(String.init)))
        }
        let tombstones = try await runner.run(PostgresQuery(unsafeSQL: "SELECT \(q("Z_TOKEN")), \(q("Z_SEQ")), \(q("Z_NAME")), \(q("Z_INTEGER")), \(q("Z_REAL")), \(q("Z_DECIMAL")), \(q("Z_TEXT")), \(q("Z_BYTES")), \(q("Z_UUID")) FROM \(q(tombstoneTable)) WHERE \(q("Z_TOKEN")) = ANY($1)", binds: bindings))
        let columns = ["Z_INTEGER", "Z_REAL", "Z_DECIMAL", "Z_TEXT", "Z_BYTES", "Z_UUID"]
        for row in tombstones {
            let value = try row[0].decode(Int64.self)
            guard let position = positions[value], let index = changeIndex[value]?[try row[1].decode(Int64.self)] else { continue }
            let name = try row[2].decode(String.self)
            let entity = transactions[position].changes[index].objectID.entityName
            // An attribute the model no longer has is left out.
            guard let attribute = model.attribute(named: name, in: entity),
                  let column = columns.firstIndex(of: tombstoneColumn(attribute.type)),
                  let decoded = try? PostgresValueCoding.propertyValue(from: row[3 + column], type: attribute.type), !decoded.isNull else { continue }
            transactions[position].changes[index].tombstone[name] = decoded
        }
        return transactions
    }

    // MARK: - Consumers and purging

    /// Records consumer `name`'s token (never moving it backwards); a
    /// token newer than the newest transaction is refused.
    static func recordConsumer(_ runner: PostgresStatementRunner, name: String, token: Int64, at date: Date, place: String) async throws {
        let newest = try await state(runner).last
        guard token <= newest else {
            throw StrataError(.invalidValue, "\(place): history consumer '\(name)' cannot record token \(token): the store's newest transaction is token \(newest)")
        }
        try await runner.run(
            "INSERT INTO \(q(consumerTable)) (\(q("Z_NAME")), \(q("Z_TOKEN")), \(q("Z_UPDATED"))) VALUES ($1, $2, $3) ON CONFLICT (\(q("Z_NAME"))) DO UPDATE SET \(q("Z_TOKEN")) = GREATEST(\(q(consumerTable)).\(q("Z_TOKEN")), excluded.\(q("Z_TOKEN"))), \(q("Z_UPDATED")) = excluded.\(q("Z_UPDATED"))",
            [.text(name), .integer(token), .real(date.timeIntervalSinceReferenceDate)])
    }

    static func consumers(_ runner: PostgresStatementRunner, storeIdentifier: String) async throws -> [HistoryConsumer] {
        try await runner.run("SELECT \(q("Z_NAME")), \(q("Z_TOKEN")), \(q("Z_UPDATED")) FROM \(q(consumerTable)) ORDER BY \(q("Z_NAME"))", []).map { row in
            HistoryConsumer(name: try row[0].decode(String.self), token: HistoryToken(storeIdentifier: storeIdentifier, value: try row[1].decode(Int64.self)),
                            updated: Date(timeIntervalSinceReferenceDate: try row[2].decode(Double.self)))
        }
    }

    /// Removes what every live consumer has merged (see
    /// ``HistoryTrackingStore/purgeHistory(maximumAge:)``); answers how many
    /// transactions went and the new horizon.
    static func purge(_ runner: PostgresStatementRunner, maximumAge: TimeInterval, now: Date) async throws -> (removed: Int, through: Int64) {
        let oldest = now.timeIntervalSinceReferenceDate - maximumAge
        // The state row, locked: no save hands out a token meanwhile.
        guard let state = try await runner.run("SELECT \(q("Z_LAST")), \(q("Z_THROUGH")) FROM \(q(stateTable)) WHERE \(q("Z_ID")) = 1 FOR UPDATE", []).first else {
            throw StrataError(.storeSave, "the store's history state row is missing")
        }
        let newest = try state[0].decode(Int64.self)
        let previous = try state[1].decode(Int64.self)
        let live = try await runner.run("SELECT MIN(\(q("Z_TOKEN"))) FROM \(q(consumerTable)) WHERE \(q("Z_UPDATED")) >= $1", [.real(oldest)]).first?.first?.decode(Int64?.self)
        var horizon: Int64
        if let live {
            horizon = live
        } else {
            horizon = try await runner.run("SELECT MAX(\(q("Z_TOKEN"))) FROM \(q(transactionTable)) WHERE \(q("Z_TIMESTAMP")) < $1", [.real(oldest)]).first?.first?.decode(Int64?.self) ?? 0
        }
        horizon = min(horizon, newest)
        guard horizon > previous else { return (0, previous) }
        try await runner.run("DELETE FROM \(q(tombstoneTable)) WHERE \(q("Z_TOKEN")) <= $1", [.integer(horizon)])
        try await runner.run("DELETE FROM \(q(changeTable)) WHERE \(q("Z_TOKEN")) <= $1", [.integer(horizon)])
        let removed = try await runner.run("DELETE FROM \(q(transactionTable)) WHERE \(q("Z_TOKEN")) <= $1 RETURNING 1", [.integer(horizon)]).count
        try await runner.run("UPDATE \(q(stateTable)) SET \(q("Z_THROUGH")) = $1 WHERE \(q("Z_ID")) = 1", [.integer(horizon)])
        return (removed, horizon)
    }
}
