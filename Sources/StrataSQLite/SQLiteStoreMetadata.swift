import Foundation
import GRDB
import StrataModel
import StrataStore
import StrataQuery

/// The SQLite store's metadata (``SQLStoreMetadata``), read from and
/// written to its `Z_METADATA` table (`Z_KEY TEXT PRIMARY KEY, Z_VALUE BLOB`).
typealias SQLiteStoreMetadata = SQLStoreMetadata

extension SQLStoreMetadata {
    /// What a database file holds.
    enum Probe: Sendable {
        /// No table at all: a new store.
        case empty
        /// Tables, but no Strata metadata.
        case foreign(tables: [String])
        /// A Strata store.
        case found(SQLStoreMetadata)
    }

    /// The statements creating the store's own tables.
    static var bookkeepingStatements: [String] {
        [
            "CREATE TABLE \(SQLSchema.quote(tableName)) (\(SQLSchema.quote("Z_KEY")) TEXT PRIMARY KEY, \(SQLSchema.quote("Z_VALUE")) BLOB)",
            "CREATE TABLE \(SQLSchema.quote(primaryKeyTableName)) (\(SQLSchema.quote("Z_NAME")) TEXT PRIMARY KEY, \(SQLSchema.quote("Z_MAX")) INTEGER NOT NULL)",
        ]
    }

    /// Reads the metadata of the database `db` is connected to. Throws
    /// 134080 when it is unreadable or written by a newer format.
    static func probe(_ db: Database, path: String) throws -> Probe {
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        guard !tables.isEmpty else { return .empty }
        guard tables.contains(where: { $0.caseInsensitiveCompare(tableName) == .orderedSame }) else {
            return .foreign(tables: tables.sorted())
        }
        var values: [String: DatabaseValue] = [:]
        let rows = try Row.fetchAll(db, sql: "SELECT \(SQLSchema.quote("Z_KEY")), \(SQLSchema.quote("Z_VALUE")) FROM \(SQLSchema.quote(tableName))")
        for row in rows {
            let key: DatabaseValue = row[0]
            if case .string(let name) = key.storage { values[name] = row[1] as DatabaseValue }
        }
        return .found(try decode(path: path) { key in
            switch values[key]?.storage {
            case .string(let s)?: return s
            case .blob(let data)?: return String(decoding: data, as: UTF8.self)
            case .int64(let v)?: return String(v)
            default: throw StrataError(.storeOpen, "store \(path): metadata key '\(key)' is missing from \(tableName)")
            }
        })
    }

    /// Writes every key (inside the caller's transaction).
    func write(_ db: Database) throws {
        let sql = "INSERT OR REPLACE INTO \(SQLSchema.quote(Self.tableName)) (\(SQLSchema.quote("Z_KEY")), \(SQLSchema.quote("Z_VALUE"))) VALUES (?, ?)"
        for (key, text) in try keyTexts() {
            // The format version as a number, as it always was.
            let value = key == "formatVersion" ? Int64(formatVersion).databaseValue : text.databaseValue
            try db.execute(sql: sql, arguments: [key, value])
        }
    }
}
