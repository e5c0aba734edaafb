import Foundation
import GRDB
import StrataModel
import StrataStore

extension SQLiteHistory {
    /// Records the committed change sets of one group commit, one history
    /// transaction each, in a few multi-row `INSERT`s for the whole group
    /// instead of two statements per save.
    ///
    /// - ``record(_:changes:commit:tombstones:origin:processID:timestamp:flushing:)``
    ///   gathers rows: each change set gets the next token, counted
    ///   from the store's newest (`sqlite_sequence` or the table's maximum,
    ///   read once per group inside the writer's transaction, so that
    ///   another process's saves are counted) as `AUTOINCREMENT` would give
    ///   it.
    /// - ``flush(_:)`` writes what was gathered, at most
    ///   ``rowsPerStatement`` rows per statement. The caller runs it outside
    ///   any save's savepoint (after a save is released, and before the
    ///   commit): rows of saves already written must not be undone by a
    ///   later save's rollback. A failed flush fails the whole group; the
    ///   group is then written again with a savepoint for each save, each
    ///   save's rows written inside its own (`flushing`).
    ///
    /// Lives within one database access, like its statements.
    struct Recorder {
        /// Rows per multi-row statement (7 parameters a change row: 224,
        /// far below SQLite's limit of 32,766).
        static let rowsPerStatement = 32
        /// Rows gathered past which ``flushIfLarge(_:)`` writes them.
        static let flushRows = 512

        private let path: String
        /// The newest token handed out (read from the store on first use).
        private var newest: Int64?
        /// The store's newest token when this transaction recorded its
        /// first change set: every token after it that the transaction
        /// hands out is this instance's (``committedTokens``).
        private var startToken: Int64?
        /// Gathered rows, their columns one after the other.
        private var transactionCells: [DatabaseValue] = []
        private var changeCells: [DatabaseValue] = []
        private var tombstoneCells: [DatabaseValue] = []
        /// The values whose changed-property list was made last, and that list.
        private var lastNames: (values: PropertyValues, names: String)?

        /// A recorder for saves into the store at `path`; room is made for
        /// the rows of `saves` saves changing `objects` objects (what a
        /// group holds), so that the rows are not moved as they come.
        init(path: String, saves: Int, objects: Int) {
            self.path = path
            transactionCells.reserveCapacity(6 * min(saves, Self.flushRows))
            changeCells.reserveCapacity(7 * min(objects, Self.flushRows))
        }

        /// The tokens of the transactions recorded so far, for
        /// ``SQLiteOwnHistory/noteCommitted(_:)`` once they are committed;
        /// nil when none is (or the newest is not known after a failed
        /// flush).
        var committedTokens: ClosedRange<Int64>? {
            guard let startToken, let newest, newest > startToken else { return nil }
            return (startToken + 1)...newest
        }

        /// Where the gathered rows end: ``rewind(to:)`` drops what a save
        /// recorded after it.
        struct Mark {
            fileprivate let cells: (transactions: Int, changes: Int, tombstones: Int)
            fileprivate let newest: Int64?
        }

        /// The end of the rows gathered so far.
        var mark: Mark {
            Mark(cells: (transactionCells.count, changeCells.count, tombstoneCells.count), newest: newest)
        }

        /// Drops the rows gathered after `mark` (a save rolled back after
        /// it was recorded), and their tokens.
        mutating func rewind(to mark: Mark) {
            transactionCells.removeSubrange(min(mark.cells.transactions, transactionCells.count)...)
            changeCells.removeSubrange(min(mark.cells.changes, changeCells.count)...)
            tombstoneCells.removeSubrange(min(mark.cells.tombstones, tombstoneCells.count)...)
            newest = mark.newest
        }

        /// Gathers one committed change set as one transaction (written by
        /// the next ``flush(_:)``). With `flushing` (the change set has the
        /// transaction, or a savepoint, to itself), its rows are written as
        /// they accumulate, so that a large one is not held whole.
        mutating func record(_ db: Database, changes: StoreChanges, commit: StoreCommit, tombstones: [Int: [(String, DatabaseValue)]], origin: String, processID: Int32, timestamp: Date,
                             flushing: Bool = false) throws {
            let previous = try newest ?? SQLiteHistory.newestToken(db)
            if startToken == nil { startToken = previous }
            let (token, overflow) = previous.addingReportingOverflow(1)
            guard !overflow else {
                throw StrataError(.storeSave, "store \(path): history has no token left after \(previous)")
            }
            newest = token
            let tokenValue = token.databaseValue
            // Cell by cell: appending an array literal makes the array first.
            transactionCells.append(tokenValue)
            transactionCells.append(timestamp.timeIntervalSinceReferenceDate.databaseValue)
            transactionCells.append(changes.author.databaseValue)
            transactionCells.append(changes.contextName.databaseValue)
            transactionCells.append(Int64(processID).databaseValue)
            transactionCells.append(origin.databaseValue)
            var sequence: Int64 = 0
            func add(_ kind: HistoryChange.Kind, _ id: ObjectID, version: Int64, properties: String) throws {
                guard let key = id.primaryKey else { return }
                sequence += 1
                changeCells.append(tokenValue)
                changeCells.append(sequence.databaseValue)
                changeCells.append(kind.rawValue.databaseValue)
                changeCells.append(id.entityName.databaseValue)
                changeCells.append(key.databaseValue)
                changeCells.append(version.databaseValue)
                changeCells.append(properties.databaseValue)
                if flushing { try flushIfLarge(db) }
            }
            func names(_ values: PropertyValues, _ toMany: [String: [ObjectID]]) -> String {
                // Inserts of a group usually set the same names: the list
                // made for the last one is used again.
                if toMany.isEmpty, let last = lastNames, last.values.hasSameKeys(as: values) { return last.names }
                let names = (values.keys + toMany.keys).sorted().joined(separator: ",")
                if toMany.isEmpty { lastNames = (values, names) }
                return names
            }
            // The commit lists the inserts' permanent IDs in the change set's order.
            if changeCells.isEmpty { changeCells.reserveCapacity(7 * changes.inserts.count) }
            // By index: iterating a zip copies every insert.
            let insertedIDs = commit.insertedIDs
            for index in 0..<min(changes.inserts.count, insertedIDs.count) {
                try add(.insert, insertedIDs[index], version: 1, properties: names(changes.inserts[index].values, changes.inserts[index].toMany))
            }
            for update in changes.updates {
                // An update of a row already gone (without version checks) changed nothing.
                guard let version = commit.updatedVersions[update.objectID] else { continue }
                try add(.update, update.objectID, version: version, properties: names(update.values, update.toMany))
            }
            for (index, delete) in changes.deletes.enumerated() {
                try add(.delete, delete.objectID, version: 0, properties: "")
                for (name, value) in tombstones[index] ?? [] {
                    tombstoneCells.append(contentsOf: [tokenValue, sequence.databaseValue, name.databaseValue, value])
                }
            }
        }

        /// ``flush(_:)`` once many rows wait (a large group's between its
        /// saves, a large save's while it is recorded with `flushing`), so
        /// that they are not all held until the commit.
        mutating func flushIfLarge(_ db: Database) throws {
            if changeCells.count >= 7 * Self.flushRows || transactionCells.count >= 6 * Self.flushRows { try flush(db) }
        }

        /// The columns the gathered rows fill, and the statements for
        /// 0…``rowsPerStatement`` rows of each (built once).
        private static let transactionColumns = ["Z_TOKEN", "Z_TIMESTAMP", "Z_AUTHOR", "Z_CONTEXT", "Z_PROCESS", "Z_ORIGIN"]
        private static let changeColumns = ["Z_TOKEN", "Z_SEQ", "Z_TYPE", "Z_ENTITY", "Z_KEY", "Z_VERSION", "Z_PROPERTIES"]
        private static let tombstoneColumns = ["Z_TOKEN", "Z_SEQ", "Z_NAME", "Z_VALUE"]
        private static let transactionSQL = statements(transactionTable, columns: transactionColumns)
        private static let changeSQL = statements(changeTable, columns: changeColumns)
        private static let tombstoneSQL = statements(tombstoneTable, columns: tombstoneColumns)

        /// Writes every gathered row. They are dropped even when writing
        /// fails: they belong to the save (or the group) that fails with it.
        mutating func flush(_ db: Database) throws {
            defer {
                transactionCells.removeAll(keepingCapacity: true)
                changeCells.removeAll(keepingCapacity: true)
                tombstoneCells.removeAll(keepingCapacity: true)
            }
            do {
                try Self.insert(db, Self.transactionSQL, width: Self.transactionColumns.count, cells: transactionCells, path: path)
                try Self.insert(db, Self.changeSQL, width: Self.changeColumns.count, cells: changeCells, path: path)
                try Self.insert(db, Self.tombstoneSQL, width: Self.tombstoneColumns.count, cells: tombstoneCells, path: path)
            } catch {
                // The failed rows' tokens are read again after the rollback
                // (no gap is left when a save's own rows fail).
                newest = nil
                throw error
            }
        }

        /// Inserts `cells` (`width` per row) with `statements` (that for
        /// `n` rows at `n`), at most ``rowsPerStatement`` rows per statement.
        private static func insert(_ db: Database, _ statements: [String], width: Int, cells: [DatabaseValue], path: String) throws {
            var start = 0
            while start < cells.count {
                let rows = min(rowsPerStatement, (cells.count - start) / width)
                let end = start + rows * width
                let runner = SQLiteStatementRunner(try db.cachedStatement(sql: statements[rows]), path: path)
                try runner.run(cells[start..<end])
                start = end
            }
        }

        /// `INSERT INTO table (columns) VALUES (?, …), …` for 0 (unused),
        /// 1, … ``rowsPerStatement`` rows.
        static func statements(_ table: String, columns: [String]) -> [String] {
            let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
            let head = "INSERT INTO \(q(table)) (" + columns.map(q).joined(separator: ", ") + ") VALUES "
            return (0...rowsPerStatement).map { head + Array(repeating: row, count: $0).joined(separator: ", ") }
        }
    }

    /// The newest token handed out, inside the caller's transaction: the
    /// larger of the `AUTOINCREMENT` sequence (which survives purges of the
    /// newest rows) and the table's maximum (a table that never had a row
    /// has no sequence).
    static func newestToken(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: newestTokenSQL), arguments: [transactionTable]) ?? 0
    }
}
