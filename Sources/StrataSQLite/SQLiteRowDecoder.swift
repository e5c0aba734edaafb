import Foundation
import GRDB
import GRDBSQLite
import NIOConcurrencyHelpers
import StrataModel
import StrataStore
import StrataQuery

/// Turns rows of a hierarchy table into ``Snapshot``s.
///
/// Columns are found by name in each statement (once per statement, not per
/// row) and read by index, so the decoder does not depend on the physical
/// column order (a migrated table has its added columns last). A row's
/// entity is its `Z_ENT`; its snapshot holds every persisted attribute of
/// that entity (inherited ones included) and every persisted to-one as
/// `.object(id)` or `.null`. The entity of a to-one destination is the
/// declared destination when that entity has no held subentity; otherwise
/// the destinations' `Z_ENT`s are read after the rows (after each batch of
/// rows, for batched reads), in one query per destination table and in the
/// same read transaction.
struct SQLiteRowDecoder {
    let mapping: SQLiteStoreMapping
    let storeIdentifier: String
    /// For messages.
    let path: String
    /// The column bindings of the statements ``visitRows(statement:sql:sqlHash:arguments:table:_:visitor:)``
    /// decoded so far; nil for a decoder that does not keep them.
    private let bindings: BindingCache?

    /// A decoder of the rows of `mapping`'s tables, which keeps the column
    /// bindings of the statements it visits when `keepsBindings` (a
    /// store's decoder, used for every read; not one made per save).
    init(mapping: SQLiteStoreMapping, storeIdentifier: String, path: String, keepsBindings: Bool = false) {
        self.mapping = mapping
        self.storeIdentifier = storeIdentifier
        self.path = path
        bindings = keepsBindings ? BindingCache() : nil
    }

    /// SQLite's limit on bound parameters in one statement.
    static let maximumArguments = 32766
    /// Primary keys per `IN (…)` chunk.
    static let chunkSize = 32000

    typealias Values = PropertyValues

    private struct BoundAttribute: Sendable {
        var name: String
        /// Where the name's UTF-8 bytes are in the binding's ``Binding/names``.
        var nameBytes: Range<Int>
        var column: CInt
        var slot: Int
        var type: AttributeType
    }

    private struct BoundToOne: Sendable {
        var name: String
        /// Where the name's UTF-8 bytes are in the binding's ``Binding/names``.
        var nameBytes: Range<Int>
        var column: CInt
        var slot: Int
        var field: SQLiteStoreMapping.ToOneField
    }

    /// One entity's fields bound to a statement's columns. Each row's values
    /// start as `template`'s (every key of the entity's layout, all
    /// `.null`, in a fresh array) and are set by slot: no key is hashed per row, and every
    /// snapshot of the entity shares the layout.
    private final class BoundEntity: Sendable {
        let name: String
        let template: Values
        /// Where its name, attributes and to-ones are in the binding.
        let span: Span

        init(name: String, template: Values, span: Span) {
            self.name = name
            self.template = template
            self.span = span
        }
    }

    /// Where an entity's parts are in its ``Binding``: its name in
    /// ``Binding/names``, its fields in ``Binding/attributes`` and
    /// ``Binding/toOnes``. Positions only, so that
    /// ``SQLiteRowDecoder/visitRows(statement:sql:sqlHash:arguments:table:_:visitor:)``
    /// retains nothing per row to find them.
    private struct Span: Sendable {
        var name: Range<Int>
        var attributes: Range<Int>
        var toOnes: Range<Int>
    }

    /// Names as UTF-8 bytes, one after the other.
    private struct Names: Sendable {
        private(set) var bytes: [UInt8] = []

        /// Appends `text`; answers where its bytes are.
        mutating func append(_ text: String) -> Range<Int> {
            let start = bytes.count
            bytes.append(contentsOf: text.utf8)
            return start..<bytes.count
        }
    }

    private struct PendingDestination {
        var snapshot: Int
        var name: String
        var table: String
        var declared: String
        var key: Int64
    }

    // MARK: - Rows

    /// Snapshots of the rows `statement`, prepared from `sql` (a `SELECT`
    /// of whole rows of `table`), returns with `arguments`, in order.
    func snapshots(_ db: Database, statement: Statement, sql: String, arguments: [SQLValue], table: String) throws -> [Snapshot] {
        var result: [Snapshot] = []
        try appendSnapshots(db, statement: statement, sql: sql, arguments: arguments, table: table, to: &result)
        return result
    }

    /// The same snapshots as ``snapshots(_:statement:sql:arguments:table:)``,
    /// handed to `body` in order, `batchSize` at a time (the last batch may
    /// be smaller; no empty batch), each batch complete (its destinations'
    /// entities resolved) before it is handed on, while later rows are
    /// still to be read. A throw from `body` stops the reading.
    func snapshotBatches(_ db: Database, statement: Statement, sql: String, arguments: [SQLValue], table: String, batchSize: Int, _ body: ([Snapshot]) throws -> Void) throws {
        var batch: [Snapshot] = []
        try decodeRows(db, statement: statement, sql: sql, arguments: arguments, table: table, batchSize: max(1, batchSize), into: &batch) { batch in
            try body(batch)
            batch = []
        }
    }

    /// The current snapshots of rows of `table` with these primary keys, by key.
    ///
    /// A chunk of at most ``largestKeptKeyList`` keys is read by a statement
    /// the connection keeps, its list of keys padded to a power of two with
    /// the last key again (`IN` tests membership, so a key listed twice
    /// reads its row once): a get the row cache does not hold reads one
    /// row with a statement prepared once, not parsed and planned again,
    /// and a table has at most seven such statements, whose column
    /// bindings are kept too. Larger chunks are prepared for the one read.
    func snapshots(_ db: Database, table: String, keys: [Int64]) throws -> [Int64: Snapshot] {
        var result: [Snapshot] = []
        for chunk in Self.chunks(of: keys) {
            let list = KeyList(chunk)
            let sql = Self.rowsByKeySQL(table: table, keys: list.arguments.count)
            if list.isKept {
                try appendSnapshots(db, statement: db.cachedStatement(sql: sql), sql: sql, arguments: list.arguments, table: table, to: &result)
            } else {
                // Prepared for this read, its binding not kept either.
                let statement = try db.makeStatement(sql: sql)
                try decodeRows(db, statement: statement, binding: bind(statement, table: table), arguments: list.arguments, table: table, batchSize: .max, into: &result) { _ in }
            }
        }
        var byKey: [Int64: Snapshot] = [:]
        for snapshot in result {
            if let key = snapshot.objectID.primaryKey { byKey[key] = snapshot }
        }
        return byKey
    }

    private func appendSnapshots(_ db: Database, statement: Statement, sql: String, arguments: [SQLValue], table: String, to result: inout [Snapshot]) throws {
        // One batch of every row, appended to what `result` holds.
        try decodeRows(db, statement: statement, sql: sql, arguments: arguments, table: table, batchSize: .max, into: &result) { _ in }
    }

    /// The columns of a statement's rows: the system columns' and each
    /// held entity's fields'.
    private struct Binding: Sendable {
        var key: CInt
        var entity: CInt
        var version: CInt
        /// By entity number.
        var entities: [Int64: BoundEntity]
        /// Every entity's bound attributes and to-ones, entity after entity
        /// (``BoundEntity/span``).
        var attributes: [BoundAttribute]
        var toOnes: [BoundToOne]
        /// The store's identifier and every name of the entities and their
        /// fields, in UTF-8: a visitor (generic across modules, so a call
        /// this code cannot see) is told names as these bytes, since each
        /// string handed over would be retained and released around every
        /// call, for every value of every row.
        var names: Names
        /// Where the store's identifier is in ``names``.
        var storeIdentifierBytes: Range<Int>
    }

    /// The bindings of statements already decoded, by table and SQL text:
    /// a statement's columns, and so its binding, depend on nothing else
    /// while the store is open (its schema is fixed then). Finding a
    /// statement's columns by name builds a dictionary and an entity list,
    /// which cost as much as reading a few rows.
    private final class BindingCache: Sendable {
        private struct Key: Hashable {
            var table: String
            var sql: String
            /// `sql.hashValue`, the caller's (``CompiledQuery/sqlHash``):
            /// the key's hash, found outside the lock.
            var sqlHash: Int

            static func == (lhs: Key, rhs: Key) -> Bool {
                lhs.sqlHash == rhs.sqlHash && lhs.sql == rhs.sql && lhs.table == rhs.table
            }

            func hash(into hasher: inout Hasher) {
                hasher.combine(sqlHash)
            }
        }

        /// The most bindings kept; past it the cache starts over (the
        /// statements are those of predicates the stores see often, and
        /// GRDB keeps as many of them prepared).
        static let capacity = 256
        private let bindings = NIOLockedValueBox<[Key: Binding]>([:])

        /// The binding of the statement of `sql` (whole rows of `table`;
        /// `sqlHash` is `sql.hashValue`), made by `make` the first time. (The SQL is the caller's:
        /// GRDB's `Statement.sql` makes a new string, trimmed, every time.)
        func binding(sql: String, sqlHash: Int, table: String, make: () throws -> Binding) rethrows -> Binding {
            let key = Key(table: table, sql: sql, sqlHash: sqlHash)
            if let binding = bindings.withLockedValue({ $0[key] }) { return binding }
            let binding = try make()
            bindings.withLockedValue { bindings in
                if bindings.count >= Self.capacity { bindings.removeAll(keepingCapacity: true) }
                bindings[key] = binding
            }
            return binding
        }
    }

    /// The binding of `statement` (whole rows of `table`), prepared from
    /// `sql`, kept for the next time.
    private func binding(of statement: Statement, sql: String, sqlHash: Int? = nil, table: String) throws -> Binding {
        guard let bindings else { return try bind(statement, table: table) }
        return try bindings.binding(sql: sql, sqlHash: sqlHash ?? sql.hashValue, table: table) { try bind(statement, table: table) }
    }

    /// Finds the columns of `statement` (whole rows of `table`) by name.
    private func bind(_ statement: Statement, table: String) throws -> Binding {
        guard let tableInfo = mapping.tables[table] else {
            throw StrataError(.storeOpen, "store \(path): no table \(table) in the store's schema")
        }
        var indexByName: [String: Int] = [:]
        for (i, name) in statement.columnNames.enumerated() where indexByName[name] == nil { indexByName[name] = i }
        func index(of column: String) throws -> Int {
            guard let i = indexByName[column] else {
                throw StrataError(.storeOpen, "store \(path): table \(table) has no column \(column); the file does not match its metadata")
            }
            return i
        }
        let pkIndex = try index(of: "Z_PK")
        let entIndex = try index(of: "Z_ENT")
        let optIndex = try index(of: "Z_OPT")
        var bound: [Int64: BoundEntity] = [:]
        var attributes: [BoundAttribute] = []
        var toOnes: [BoundToOne] = []
        var names = Names()
        let storeIdentifierBytes = names.append(storeIdentifier)
        for name in tableInfo.entities {
            guard let entity = mapping.entities[name] else { continue }
            let template = entity.snapshotTemplate
            func slot(_ key: String) throws -> Int {
                guard let slot = template.layout.slot(of: key) else {
                    throw StrataError(.storeOpen, "store \(path): \(name) has a property '\(key)' the decoder lost")
                }
                return slot
            }
            let nameBytes = names.append(name)
            let firstAttribute = attributes.count
            for attribute in entity.attributes {
                attributes.append(BoundAttribute(name: attribute.name, nameBytes: names.append(attribute.name), column: CInt(try index(of: attribute.column)),
                                                 slot: try slot(attribute.name), type: attribute.type))
            }
            let firstToOne = toOnes.count
            for toOne in entity.toOnes {
                toOnes.append(BoundToOne(name: toOne.name, nameBytes: names.append(toOne.name), column: CInt(try index(of: toOne.column)),
                                         slot: try slot(toOne.name), field: toOne))
            }
            bound[entity.number] = BoundEntity(name: name, template: template,
                                               span: Span(name: nameBytes, attributes: firstAttribute..<attributes.count, toOnes: firstToOne..<toOnes.count))
        }
        return Binding(key: CInt(pkIndex), entity: CInt(entIndex), version: CInt(optIndex), entities: bound, attributes: attributes, toOnes: toOnes,
                       names: names, storeIdentifierBytes: storeIdentifierBytes)
    }

    /// ``decodeRows(_:statement:binding:arguments:table:batchSize:into:flush:)``
    /// of a statement prepared from `sql`, with its binding kept.
    private func decodeRows(_ db: Database, statement: Statement, sql: String, arguments: [SQLValue], table: String, batchSize: Int,
                            into result: inout [Snapshot], flush: (inout [Snapshot]) throws -> Void) throws {
        try decodeRows(db, statement: statement, binding: binding(of: statement, sql: sql, table: table), arguments: arguments, table: table,
                       batchSize: batchSize, into: &result, flush: flush)
    }

    /// Appends the statement's rows to `result`, calling `flush` each time
    /// it has appended `batchSize` rows and once at the end; `flush` takes
    /// the rows out of `result` (or leaves them, to collect every row).
    /// Destinations whose entity needs a lookup are resolved before each
    /// `flush`. The statement is stepped on SQLite directly
    /// (``SQLiteStatementRunner/forEachRow(of:arguments:_:_:)``).
    private func decodeRows(_ db: Database, statement: Statement, binding: Binding, arguments: [SQLValue], table: String, batchSize: Int,
                            into result: inout [Snapshot], flush: (inout [Snapshot]) throws -> Void) throws {
        let (bound, attributes, toOnes) = (binding.entities, binding.attributes, binding.toOnes)
        var pending: [PendingDestination] = []
        let identifier = storeIdentifier
        // Values are read straight from the statement's current row
        // (``column(_:of:type:)``: one `sqlite3_value` per column, GRDB's
        // `DatabaseValue(sqliteStatement:index:)` for anything unusual);
        // the system columns are NOT NULL.
        let sqliteStatement = statement.sqliteStatement
        let (pk, ent, opt) = (binding.key, binding.entity, binding.version)
        var lastNumber: Int64 = -1
        var lastEntity: BoundEntity?
        var appended = 0
        try SQLiteStatementRunner.forEachRow(of: statement, arguments: arguments, db) {
            let key = Int64(sqliteStatement: sqliteStatement, index: pk)
            let number = Int64(sqliteStatement: sqliteStatement, index: ent)
            let version = Int64(sqliteStatement: sqliteStatement, index: opt)
            if number != lastNumber {
                lastEntity = bound[number]
                lastNumber = number
            }
            guard let entity = lastEntity else {
                throw StrataError(.storeOpen, "store \(path): row \(key) of \(table) has entity number \(number), which is not an entity of this store")
            }
            // A fresh array of NULLs: copying the template's goes through
            // the runtime's generic copy, one element at a time.
            var values = PropertyValues(layout: entity.template.layout, repeating: .null)
            for attribute in attributes[entity.span.attributes] {
                do {
                    if let value = try Self.column(attribute.column, of: sqliteStatement, type: attribute.type) {
                        values[slot: attribute.slot] = value
                    }
                } catch let error as StrataError {
                    throw StrataError(.invalidValue, "store \(path): \(entity.name).\(attribute.name) of row \(key): \(error.message)")
                }
            }
            for toOne in toOnes[entity.span.toOnes] {
                let stored = DatabaseValue(sqliteStatement: sqliteStatement, index: toOne.column)
                switch stored.storage {
                case .null:
                    continue
                case .int64(let destination):
                    switch toOne.field.resolution {
                    case .fixed(let name), .external(let name):
                        values[slot: toOne.slot] = .object(ObjectID(storeIdentifier: identifier, entityName: name, key: .permanent(destination)))
                    case .lookup(let table, let declared):
                        values[slot: toOne.slot] = .object(ObjectID(storeIdentifier: identifier, entityName: declared, key: .permanent(destination)))
                        pending.append(PendingDestination(snapshot: result.count, name: toOne.name, table: table, declared: declared, key: destination))
                    }
                default:
                    throw StrataError(.invalidValue, "store \(path): \(entity.name).\(toOne.name) of row \(key) holds \(stored), not a primary key")
                }
            }
            result.append(Snapshot(
                objectID: ObjectID(storeIdentifier: identifier, entityName: entity.name, key: .permanent(key)),
                version: version,
                values: values
            ))
            appended += 1
            if appended == batchSize {
                try resolve(&pending, in: &result, db)
                try flush(&result)
                appended = 0
            }
        }
        guard appended > 0 else { return }
        try resolve(&pending, in: &result, db)
        try flush(&result)
    }

    /// Hands the rows of `statement`, prepared from `sql` (whole rows of
    /// `table`, which must be one of ``decodesInOneStatement(table:)``'s),
    /// to `visitor`, each value read from the row as
    /// ``snapshots(_:statement:arguments:table:)`` would read it, in the
    /// order its snapshot lists them (attributes, then to-ones). Returns
    /// how many rows there were. The statement is
    /// stepped on SQLite directly with `arguments` bound as they are
    /// (``SQLiteStatementRunner/forEachRow(of:arguments:_:_:)``), and its
    /// columns are found once per SQL text, not per read (`sqlHash` is
    /// `sql.hashValue`, the query's ``CompiledQuery/sqlHash``).
    func visitRows(statement: Statement, sql: String, sqlHash: Int, arguments: [SQLValue], table: String, _ db: Database, visitor: inout some StoredRowVisitor) throws -> Int {
        let binding = try binding(of: statement, sql: sql, sqlHash: sqlHash, table: table)
        // Everything a row needs is read through unsafe buffers taken once
        // here, and found by position: reading an array or a class per row
        // retains and releases it (the visitor is a call this code cannot see).
        return try binding.names.bytes.withUnsafeBytes { names in
            try binding.attributes.withUnsafeBufferPointer { attributes in
                try binding.toOnes.withUnsafeBufferPointer { toOnes in
                    try withUnsafeTemporaryAllocation(byteCount: Self.decimalTextBytes, alignment: 1) { scratch in
                        try visitRows(statement: statement, arguments: arguments, binding: binding, table: table, db, names: names, attributes: attributes, toOnes: toOnes,
                                      scratch: scratch, visitor: &visitor)
                    }
                }
            }
        }
    }

    /// ``visitRows(statement:sql:sqlHash:arguments:table:_:visitor:)`` with the
    /// binding's parts in hand, and `scratch` room for a decimal's text
    /// (``storedValue(_:of:type:scratch:)``).
    private func visitRows(statement: Statement, arguments: [SQLValue], binding: Binding, table: String, _ db: Database,
                           names: UnsafeRawBufferPointer, attributes: UnsafeBufferPointer<BoundAttribute>, toOnes: UnsafeBufferPointer<BoundToOne>,
                           scratch: UnsafeMutableRawBufferPointer, visitor: inout some StoredRowVisitor) throws -> Int {
        let identifier = storeIdentifier
        let sqliteStatement = statement.sqliteStatement
        let (keyColumn, entityColumn, versionColumn, entities) = (binding.key, binding.entity, binding.version, binding.entities)
        let storeIdentifierBytes = UnsafeRawBufferPointer(rebasing: names[binding.storeIdentifierBytes])
        var lastNumber: Int64 = -1
        // Taken out of the entity when it changes: a row reads positions only.
        var span = Span(name: 0..<0, attributes: 0..<0, toOnes: 0..<0)
        var rows = 0
        try SQLiteStatementRunner.forEachRow(of: statement, arguments: arguments, db) {
            let key = Int64(sqliteStatement: sqliteStatement, index: keyColumn)
            let number = Int64(sqliteStatement: sqliteStatement, index: entityColumn)
            if number != lastNumber {
                guard let found = entities[number]?.span else {
                    throw StrataError(.storeOpen, "store \(path): row \(key) of \(table) has entity number \(number), which is not an entity of this store")
                }
                span = found
                lastNumber = number
            }
            try visitor.beginRow(storeIdentifier: storeIdentifierBytes, entityName: UnsafeRawBufferPointer(rebasing: names[span.name]),
                                 key: key, version: Int64(sqliteStatement: sqliteStatement, index: versionColumn))
            for index in span.attributes {
                if let value = try Self.storedValue(attributes[index].column, of: sqliteStatement, type: attributes[index].type, scratch: scratch) {
                    try visitor.value(UnsafeRawBufferPointer(rebasing: names[attributes[index].nameBytes]), value)
                }
            }
            for index in span.toOnes {
                let stored = DatabaseValue(sqliteStatement: sqliteStatement, index: toOnes[index].column)
                switch (stored.storage, toOnes[index].field.resolution) {
                case (.null, _):
                    continue
                case (.int64(let destination), .fixed(let name)), (.int64(let destination), .external(let name)):
                    try visitor.value(UnsafeRawBufferPointer(rebasing: names[toOnes[index].nameBytes]),
                                      .value(.object(ObjectID(storeIdentifier: identifier, entityName: name, key: .permanent(destination)))))
                default:
                    // A lookup (callers take only tables without one) or
                    // not a key: the snapshot path reads and reports it.
                    let entity = binding.entities[number]?.name ?? "entity number \(number)"
                    throw StrataError(.invalidValue, "store \(path): \(entity).\(toOnes[index].name) of row \(key) cannot be read in one statement")
                }
            }
            try visitor.endRow()
            rows += 1
        }
        return rows
    }

    /// The longest decimal text ``visitRows(statement:sql:sqlHash:arguments:table:_:visitor:)``
    /// hands on as text; longer ones (exponents far from the digits) are
    /// made into a `Decimal`.
    private static let decimalTextBytes = 64

    /// A column's value for ``visitRows(statement:sql:sqlHash:arguments:table:_:visitor:)``:
    /// what ``column(_:of:type:)`` reads, with ASCII text not made into a
    /// `String` and a decimal's key written as its text into `scratch`
    /// (no `Decimal` made).
    ///
    /// The column is taken once (`sqlite3_column_value`) and read through
    /// the `sqlite3_value` calls: each `sqlite3_column_*` call enters and
    /// leaves the connection's mutex and checks for a failed allocation,
    /// and a text column took three of them. SQLite documents the value as
    /// unprotected, which matters only to a connection shared between
    /// threads at once; a read's connection is its caller's alone, and the
    /// value is read before the statement steps again.
    @inline(__always)
    private static func storedValue(_ column: CInt, of sqliteStatement: SQLiteStatement, type: AttributeType,
                                    scratch: UnsafeMutableRawBufferPointer) throws(StrataError) -> StoredValue? {
        guard let value = sqlite3_column_value(sqliteStatement, column) else { return nil }
        let stored = sqlite3_value_type(value)
        if stored == SQLITE_NULL { return nil }
        if type == .string, stored == SQLITE_TEXT, let text = sqlite3_value_text(value) {
            // ASCII without U+0000 reads the same however it is read; other
            // text takes the general path (which repairs invalid UTF-8).
            let bytes = UnsafeRawBufferPointer(start: text, count: Int(sqlite3_value_bytes(value)))
            if Self.isPlainASCII(bytes) { return .text(bytes) }
        }
        // A malformed key takes the general path, which reports it.
        if type == .decimal, stored == SQLITE_TEXT, let text = sqlite3_value_text(value),
           let length = DecimalKey.writeText(ofKey: UnsafeRawBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), into: scratch) {
            return .decimalText(UnsafeRawBufferPointer(rebasing: scratch[..<length]))
        }
        return try Self.column(value, storedAs: stored, column, of: sqliteStatement, type: type).map { StoredValue.value($0) }
    }

    /// Whether every byte is ASCII and none is 0.
    @inline(__always)
    private static func isPlainASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for byte in bytes where byte == 0 || byte >= 0x80 { return false }
        return true
    }

    /// Whether decoding rows of `table` runs no statement but the one
    /// read (``SQLiteStoreMapping/tablesDecodedInOneStatement``).
    func decodesInOneStatement(table: String) -> Bool {
        mapping.tablesDecodedInOneStatement.contains(table)
    }

    /// Gives the to-one destinations in `pending` (positions in `result`)
    /// the entity their row's `Z_ENT` names when it is not the declared
    /// one: one query per destination table. Empties `pending`.
    private func resolve(_ pending: inout [PendingDestination], in result: inout [Snapshot], _ db: Database) throws {
        guard !pending.isEmpty else { return }
        defer { pending.removeAll() }
        var keysByTable: [String: Set<Int64>] = [:]
        for item in pending { keysByTable[item.table, default: []].insert(item.key) }
        var entitiesByTable: [String: [Int64: String]] = [:]
        for (table, keys) in keysByTable {
            entitiesByTable[table] = try entityNames(db, table: table, keys: Array(keys))
        }
        for item in pending {
            guard let name = entitiesByTable[item.table]?[item.key], name != item.declared else { continue }
            result[item.snapshot].values[item.name] = .object(ObjectID(storeIdentifier: storeIdentifier, entityName: name, key: .permanent(item.key)))
        }
    }

    /// The value of an attribute of `type` in `column` of the statement's
    /// current row; nil for NULL. Numbers, Booleans and dates are read
    /// with SQLite's own conversions (as its C API does); other types go
    /// through ``propertyValue(_:type:)``.
    @inline(__always)
    static func column(_ column: CInt, of sqliteStatement: SQLiteStatement, type: AttributeType) throws(StrataError) -> PropertyValue? {
        guard let value = sqlite3_column_value(sqliteStatement, column) else { return nil }
        let stored = sqlite3_value_type(value)
        if stored == SQLITE_NULL { return nil }
        return try Self.column(value, storedAs: stored, column, of: sqliteStatement, type: type)
    }

    /// ``column(_:of:type:)`` with the column's value in hand (not NULL;
    /// `stored` its type), read through the `sqlite3_value` calls (see
    /// ``storedValue(_:of:type:scratch:)``).
    @inline(__always)
    private static func column(_ value: OpaquePointer, storedAs stored: CInt, _ column: CInt, of sqliteStatement: SQLiteStatement,
                               type: AttributeType) throws(StrataError) -> PropertyValue? {
        switch type {
        case .integer16, .integer32, .integer64:
            return .integer(sqlite3_value_int64(value))
        case .double, .float:
            return .double(sqlite3_value_double(value))
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: sqlite3_value_double(value)))
        case .boolean:
            return .boolean(sqlite3_value_int64(value) != 0)
        case .uuid where stored == SQLITE_BLOB:
            // Sixteen bytes read in place (no `Data` per row); anything else
            // gets the checks and the error of the general path.
            if let bytes = sqlite3_value_blob(value), sqlite3_value_bytes(value) == 16 {
                return .uuid(UUID(uuid: bytes.loadUnaligned(as: uuid_t.self)))
            }
        default:
            break
        }
        return try propertyValue(DatabaseValue(sqliteStatement: sqliteStatement, index: column), type: type)
    }

    /// The value of an attribute of `type` from its stored form: text
    /// stored as a BLOB (it held U+0000, see ``SQLiteAttributeEncoder/text(_:)``)
    /// is read back whole; everything else as ``SQLiteValueCoding`` reads it.
    static func propertyValue(_ stored: DatabaseValue, type: AttributeType) throws(StrataError) -> PropertyValue {
        switch (type, stored.storage) {
        case (.string, .string(let text)): return .string(text)
        case (.string, .blob(let bytes)): return .string(String(decoding: bytes, as: UTF8.self))
        case (.uri, .string(let text)), (.objectID, .string(let text)): return .uri(text)
        case (.uri, .blob(let bytes)), (.objectID, .blob(let bytes)): return .uri(String(decoding: bytes, as: UTF8.self))
        default: return try SQLiteValueCoding.propertyValue(from: stored, type: type)
        }
    }

    // MARK: - Keys and entities

    /// The entity of each existing row of `table` among `keys`.
    func entityNames(_ db: Database, table: String, keys: [Int64]) throws -> [Int64: String] {
        var result: [Int64: String] = [:]
        for chunk in Self.chunks(of: keys) {
            let sql = "SELECT \(SQLSchema.quote("Z_PK")), \(SQLSchema.quote("Z_ENT")) FROM \(SQLSchema.quote(table)) WHERE \(SQLSchema.quote("Z_PK")) IN (" + Self.placeholders(chunk.count) + ")"
            let cursor = try Row.fetchCursor(db.makeStatement(sql: sql), arguments: StatementArguments(chunk))
            try cursor.forEach { row in
                let key = try row.decode(Int64.self, atIndex: 0)
                let number = try row.decode(Int64.self, atIndex: 1)
                if let entity = mapping.entitiesByNumber[number] { result[key] = entity.name }
            }
        }
        return result
    }

    /// Object IDs of `(Z_PK, Z_ENT)` rows, in order.
    func objectIDs(statement: Statement, arguments: StatementArguments, fallbackEntity: String) throws -> [ObjectID] {
        var result: [ObjectID] = []
        let identifier = storeIdentifier
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        try cursor.forEach { row in
            let key = try row.decode(Int64.self, atIndex: 0)
            let number = try row.decode(DatabaseValue.self, atIndex: 1)
            var name = fallbackEntity
            if case .int64(let n) = number.storage, let entity = mapping.entitiesByNumber[n] { name = entity.name }
            result.append(ObjectID(storeIdentifier: identifier, entityName: name, key: .permanent(key)))
        }
        return result
    }

    // MARK: - Helpers

    /// `?, ?, …` (`count` placeholders).
    static func placeholders(_ count: Int) -> String {
        guard count > 0 else { return "" }
        var text = "?"
        text.reserveCapacity(count * 3)
        for _ in 1..<count { text += ", ?" }
        return text
    }

    /// The most keys read by a kept statement (``snapshots(_:table:keys:)``).
    static let largestKeptKeyList = 64

    /// The length a list of `count` keys is padded to for a kept
    /// statement: the next power of two.
    static func keptKeyListLength(for count: Int) -> Int {
        count <= 1 ? 1 : 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)
    }

    /// The arguments of a `Z_PK IN (…)` statement for a chunk of keys
    /// (``chunks(of:)``): at most ``largestKeptKeyList`` keys are padded
    /// to ``keptKeyListLength(for:)`` with the last key again (`IN` tests
    /// membership, so a key listed twice matches its row once), for a
    /// statement the connection keeps (`cachedStatement`); a longer chunk
    /// is listed as it is, for a statement prepared once.
    struct KeyList {
        /// One `.integer` per parameter of the statement.
        let arguments: [SQLValue]
        /// Whether the statement is to be kept.
        let isKept: Bool

        init(_ chunk: ArraySlice<Int64>) {
            var arguments = chunk.map { SQLValue.integer($0) }
            isKept = chunk.count <= SQLiteRowDecoder.largestKeptKeyList
            if isKept, let last = chunk.last {
                arguments.append(contentsOf: repeatElement(.integer(last), count: SQLiteRowDecoder.keptKeyListLength(for: chunk.count) - chunk.count))
            }
            self.arguments = arguments
        }
    }

    /// The rows of `table` whose primary key is one of `keys` parameters.
    static func rowsByKeySQL(table: String, keys: Int) -> String {
        "SELECT * FROM \(SQLSchema.quote(table)) WHERE \(SQLSchema.quote("Z_PK")) IN (" + placeholders(keys) + ")"
    }

    /// `keys` in chunks that respect SQLite's parameter limit.
    static func chunks(of keys: [Int64]) -> [ArraySlice<Int64>] {
        stride(from: 0, to: keys.count, by: chunkSize).map { keys[$0..<min($0 + chunkSize, keys.count)] }
    }
}
