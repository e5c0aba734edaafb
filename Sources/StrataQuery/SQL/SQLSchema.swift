import Foundation
import StrataModel

/// The deterministic layout of the entities one SQL store holds (SQLite's
/// and PostgreSQL's alike): which table and column hold what, for the store
/// (to create the schema, write and read rows) and for ``SQLQueryCompiler``.
///
/// Layout:
/// - one table per inheritance *root* (`Z<ROOT>`), holding the rows of every
///   held entity of the hierarchy, with `Z_PK INTEGER PRIMARY KEY`,
///   `Z_ENT INTEGER NOT NULL` (the row's ``entityNumber(of:)``, assigned
///   once per store and then kept: see ``init(model:entityNames:entityNumbers:)``) and
///   `Z_OPT INTEGER NOT NULL` (the optimistic-locking version);
/// - one nullable column per persisted attribute, per *declaring* entity (a
///   subentity's inherited attribute shares its ancestor's column; sibling
///   subentities never share), named `Z<NAME>` and made unique
///   case-insensitively (SQLite identifiers are) with `_2`, `_3`… suffixes,
///   in a fixed order, so the mapping is a pure function of the model;
/// - one INTEGER foreign-key column per persisted to-one relationship;
/// - a to-many whose inverse is a persisted to-one is read through that
///   inverse's foreign key (an ordered one adds an order column `Z_FOK_…`
///   to the destination table); every other persisted to-many uses a join
///   table (``JoinTable``) — one shared table per many-to-many pair;
/// - transient attributes and relationships get nothing;
/// - table and index names are never one the store reserves for itself
///   (``isReserved(_:)``): a colliding name gets a suffix like any other
///   collision, and a name in the reserved `Z_STRATA_` namespace is moved out
///   of it (`Z__STRATA_…`).
///
/// Column types (``Column/sqlType``) are SQLite's: integers and Booleans
/// `INTEGER`; Double, Float and Date (seconds since 2001) `REAL`; Decimal
/// `TEXT` holding a ``DecimalKey``; String and URI `TEXT`; Binary and
/// Transformable `BLOB`; UUID a 16-byte `BLOB` (the PostgreSQL store maps
/// each role and attribute type to its own). Every identifier the schema
/// produces must be written through ``quote(_:)``.
public struct SQLSchema: Sendable {
    /// A column of a table.
    public struct Column: Sendable, Hashable {
        /// The column's name (unquoted).
        public var name: String
        /// The declared SQL type.
        public var sqlType: String
        /// What the column holds.
        public var role: Role

        /// What a column holds.
        public enum Role: Sendable, Hashable {
            /// `Z_PK`.
            case primaryKey
            /// `Z_ENT`.
            case entityNumber
            /// `Z_OPT`.
            case version
            /// The attribute `name` declared by `entity`.
            case attribute(entity: String, name: String)
            /// The foreign key of the to-one relationship `name` declared by `entity`.
            case foreignKey(entity: String, name: String)
            /// The position of this row among the destinations of the ordered
            /// to-many `name` declared by `entity` (whose inverse is this
            /// table's to-one foreign key).
            case order(entity: String, name: String)
        }
    }

    /// The table of one inheritance hierarchy.
    public struct Table: Sendable, Hashable {
        /// The table's name (unquoted).
        public var name: String
        /// The hierarchy's root entity.
        public var rootEntity: String
        /// The held entities whose rows live here, sorted by name.
        public var entities: [String]
        /// The columns, in table order: `Z_PK`, `Z_ENT`, `Z_OPT`, attributes,
        /// foreign keys, order columns.
        public var columns: [Column]

        /// Creates a table description.
        public init(name: String, rootEntity: String, entities: [String], columns: [Column]) {
            self.name = name
            self.rootEntity = rootEntity
            self.entities = entities
            self.columns = columns
        }
    }

    /// A join table of a to-many relationship (or of a many-to-many pair).
    public struct JoinTable: Sendable, Hashable {
        /// The table's name (unquoted).
        public var name: String
        /// The owning side: the relationship whose source rows are in ``sourceColumn``.
        public var entity: String
        /// The owning relationship's name.
        public var relationship: String
        /// The owner's primary keys.
        public var sourceColumn: String
        /// The destinations' primary keys.
        public var destinationColumn: String
        /// The position in the owner's ordered relationship, if ordered.
        public var orderColumn: String?
        /// The position in the inverse's ordered relationship, if it is an
        /// ordered to-many.
        public var inverseOrderColumn: String?

        /// Creates a join table description.
        public init(name: String, entity: String, relationship: String, sourceColumn: String, destinationColumn: String, orderColumn: String?, inverseOrderColumn: String?) {
            self.name = name
            self.entity = entity
            self.relationship = relationship
            self.sourceColumn = sourceColumn
            self.destinationColumn = destinationColumn
            self.orderColumn = orderColumn
            self.inverseOrderColumn = inverseOrderColumn
        }
    }

    /// Where a relationship's links are stored.
    public enum RelationshipStorage: Sendable, Hashable {
        /// A to-one: `column` of the source's table holds the destination's primary key.
        case foreignKey(table: String, column: String)
        /// A to-many read through its inverse to-one: rows of the destination's
        /// `table` whose `column` holds the source's primary key, ordered by
        /// `orderColumn` for ordered relationships.
        case inverseForeignKey(table: String, column: String, orderColumn: String?)
        /// A to-many through a join table: rows of `table` with the source's
        /// primary key in `sourceColumn` and a destination's in
        /// `destinationColumn`, ordered by `orderColumn` for ordered ones.
        case joinTable(table: String, sourceColumn: String, destinationColumn: String, orderColumn: String?)
        /// A persisted relationship whose destination entity is not held by
        /// this store (always empty / nil here).
        case external
        /// A transient relationship: nothing is stored.
        case transient
    }

    /// An index or uniqueness constraint.
    public struct Index: Sendable, Hashable {
        /// One indexed column.
        public struct Element: Sendable, Hashable {
            /// The column's name (unquoted).
            public var column: String
            /// Ascending (`true`) or descending.
            public var ascending: Bool

            /// Creates an element.
            public init(column: String, ascending: Bool) {
                self.column = column
                self.ascending = ascending
            }
        }

        /// The index's name (unquoted).
        public var name: String
        /// The indexed table.
        public var table: String
        /// The indexed columns, in order.
        public var elements: [Element]
        /// Whether the index enforces uniqueness.
        public var isUnique: Bool
        /// For partial indexes: the `Z_ENT` numbers the index covers (a
        /// uniqueness constraint of a subentity must not constrain its
        /// siblings' rows in the shared table).
        public var entityNumbers: [Int64]?

        /// Creates an index description.
        public init(name: String, table: String, elements: [Element], isUnique: Bool, entityNumbers: [Int64]?) {
            self.name = name
            self.table = table
            self.elements = elements
            self.isUnique = isUnique
            self.entityNumbers = entityNumbers
        }
    }

    /// The model.
    public let model: ObjectModel
    /// The entities this store holds, sorted by name.
    public let entityNames: [String]
    /// The hierarchy tables, sorted by root entity name.
    public let tables: [Table]
    /// The join tables, sorted by name.
    public let joinTables: [JoinTable]
    /// Every index, in creation order.
    public let indexes: [Index]

    let entityNumbers: [String: Int64]
    let entitiesByNumber: [Int64: String]
    let tableIndexByEntity: [String: Int]
    let attributeColumns: [String: [String: String]]
    let relationshipStorages: [String: [String: RelationshipStorage]]

    /// Lays out `entityNames` of `model` (every entity when nil).
    ///
    /// `entityNumbers` are the `Z_ENT` numbers a store already gave its
    /// entities (from its metadata; nil for a new store). Held entities
    /// that have one keep it; the others get the next numbers above the
    /// highest existing one, in name order, so adding an entity never
    /// renumbers the rows already stored. Without existing numbers the held
    /// entities are numbered 1… in name order (UTF-8 bytes).
    ///
    /// Throws ``StrataError/Code/modelInvalid`` for an unknown entity, or a
    /// fetch index or uniqueness constraint naming a property that has no
    /// column; ``StrataError/Code/invalidValue`` when `entityNumbers` holds
    /// a number that is not positive or that two entities share.
    public init(model: ObjectModel, entityNames: [String]? = nil, entityNumbers existingNumbers: [String: Int64]? = nil) throws(StrataError) {
        var layout = SchemaLayout(model: model, existingNumbers: existingNumbers)
        try layout.build(entityNames: entityNames ?? model.entities.map(\.name))
        self.model = model
        self.entityNames = layout.held
        self.tables = layout.tables
        self.joinTables = layout.joinTables
        self.indexes = layout.indexes
        self.entityNumbers = layout.entityNumbers
        self.entitiesByNumber = Dictionary(layout.entityNumbers.map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        self.tableIndexByEntity = layout.tableIndexByEntity
        self.attributeColumns = layout.attributeColumns
        self.relationshipStorages = layout.relationshipStorages
    }

    // MARK: - Lookups

    /// The held entity's number in `Z_ENT` (nil for an entity this layout
    /// does not hold): the number given by the `entityNumbers` the layout
    /// was made with, or a new one above them (see
    /// ``init(model:entityNames:entityNumbers:)``). It does not depend on
    /// the declaration order, nor on entities outside the held ones.
    public func entityNumber(of entityName: String) -> Int64? {
        entityNumbers[entityName]
    }

    /// Every held entity's `Z_ENT` number, by entity name: what a store
    /// records so that a later layout keeps the numbers.
    public var entityNumberMap: [String: Int64] {
        entityNumbers
    }

    /// The entity with this `Z_ENT` number.
    public func entityName(forNumber number: Int64) -> String? {
        entitiesByNumber[number]
    }

    /// Whether this store holds the entity.
    public func holds(_ entityName: String) -> Bool {
        tableIndexByEntity[entityName] != nil
    }

    /// The table holding the entity's rows (its hierarchy root's table).
    public func table(for entityName: String) -> Table? {
        tableIndexByEntity[entityName].map { tables[$0] }
    }

    /// The column of an attribute of `entityName` (declared or inherited);
    /// nil for transient or unknown attributes.
    public func column(forAttribute attributeName: String, in entityName: String) -> String? {
        attributeColumns[entityName]?[attributeName]
    }

    /// How a relationship of `entityName` (declared or inherited) is stored;
    /// nil for unknown relationships.
    public func storage(ofRelationship relationshipName: String, in entityName: String) -> RelationshipStorage? {
        relationshipStorages[entityName]?[relationshipName]
    }

    /// The held entities a fetch of `entityName` covers: it and, when asked,
    /// its held subentities.
    public func entities(covering entityName: String, includingSubentities: Bool) -> [String] {
        let candidates = includingSubentities ? model.hierarchy(of: entityName) : [entityName]
        return candidates.filter { holds($0) }
    }

    // MARK: - Reserved names

    /// Tables of the store itself (`Z_METADATA`, `Z_PRIMARYKEY`), which no
    /// layout ever names a table or index after (compared case-insensitively,
    /// as SQLite does).
    public static let reservedTableNames: [String] = ["Z_METADATA", "Z_PRIMARYKEY"]

    /// The namespace the store keeps for its own temporary names (for
    /// instance a migration renaming tables and columns): no table, index or
    /// column name of a layout starts with it (case-insensitively).
    public static let reservedPrefix = "Z_STRATA_"

    /// Whether `name` is a table or index name the store reserves for
    /// itself: one of ``reservedTableNames`` or a name starting with
    /// ``reservedPrefix``, in any case.
    public static func isReserved(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower.hasPrefix(reservedPrefix.lowercased()) || reservedTableNames.contains { $0.lowercased() == lower }
    }

    // MARK: - SQL text

    /// `identifier` as a double-quoted SQL identifier (inner quotes doubled).
    public static func quote(_ identifier: String) -> String {
        // Without Foundation: doubling quotes through NSString showed up in
        // every save's profile (history statements are built per save).
        guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
        var quoted = "\""
        for character in identifier {
            quoted.append(character)
            if character == "\"" { quoted.append("\"") }
        }
        quoted.append("\"")
        return quoted
    }
}
