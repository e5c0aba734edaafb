import StrataModel

/// Compares what a SQL store recorded (``SQLStoreMetadata``) with what the
/// model needs and plans the in-place migration, or explains precisely why
/// there cannot be one. The plan is the same for every SQL store; a
/// ``Backend`` gives what differs (its CREATE statements, the columns it
/// keeps beside a column, how a key row is added).
///
/// Lightweight (migrated in place, in one transaction):
/// - an added entity (new hierarchy table, or new columns in an existing
///   hierarchy's table) and its join tables;
/// - an added optional attribute, or one with a default (`ADD COLUMN`, then
///   the default written into the rows of the entities that have it);
/// - an added optional relationship (foreign-key or order column, join table);
/// - a mandatory attribute becoming optional, or a relationship only
///   becoming optional (no DDL);
/// - added, removed or changed indexes and uniqueness constraints;
/// - table, column or index renames when the deterministic naming moves a
///   name.
///
/// Entity numbers (`Z_ENT`) never change: the target layout is made with the
/// numbers the store recorded, an added entity taking the next free one, so
/// an entity added to another configuration changes nothing here and one
/// added to this configuration only adds its table or columns. A target
/// that would renumber a stored entity is refused (it cannot happen short of
/// a bug).
///
/// Everything else is error 134100 listing every entity and property that
/// differs (error 134020 when the only problem is that the store holds
/// entities the configuration does not). With
/// automatic migration off, any model-level difference is 134100; renames
/// and index changes (not part of the version hashes) are still applied.
package struct SQLMigrationPlanner {
    /// One statement of a migration (`?` placeholders, in the backend's
    /// dialect once ``Backend/statement`` has written them).
    package struct Step {
        package var sql: String
        package var arguments: [SQLValue] = []
        /// False for index creation and removal (which a read-only store may skip).
        package var changesData: Bool
    }

    /// The outcome of planning.
    package struct Plan {
        /// Model-level differences that migrate in place, for messages.
        package var changes: [String] = []
        /// The statements to run, in order, before rewriting the metadata.
        package var steps: [Step] = []
        /// Whether the recorded metadata differs from the target at all.
        package var rewritesMetadata = false

        /// Whether the store needs a write (other than indexes) to serve the model.
        package var changesData: Bool { steps.contains(where: \.changesData) }
    }

    /// What one SQL store does its own way.
    package struct Backend {
        /// The target schema's CREATE statements, tables then join tables
        /// (the order of ``SQLSchema/createStatements(ifNotExists:)``).
        package var createStatements: [String]
        /// The columns the store keeps beside `column` (PostgreSQL's folded
        /// copies of text): name, type and the value made from the column's.
        package var companions: (_ column: SQLStoreMetadata.Column) -> [(name: String, type: String, value: (SQLValue) -> SQLValue)]
        /// Adds a hierarchy's `Z_PRIMARYKEY` row (one `?`: the root
        /// entity), doing nothing when it exists.
        package var insertKeyRow: String
        /// A statement with `?` placeholders in the store's dialect.
        package var statement: (String) -> String

        /// A backend.
        package init(createStatements: [String], insertKeyRow: String, statement: @escaping (String) -> String = { $0 },
                     companions: @escaping (SQLStoreMetadata.Column) -> [(name: String, type: String, value: (SQLValue) -> SQLValue)] = { _ in [] }) {
            self.createStatements = createStatements
            self.companions = companions
            self.insertKeyRow = insertKeyRow
            self.statement = statement
        }
    }

    let stored: SQLStoreMetadata
    let target: SQLStoreMetadata
    let model: ObjectModel
    /// The target layout (``target`` was made from it).
    let schema: SQLSchema
    /// The store, for messages (`store /path/file`, `PostgreSQL store …`).
    let place: String
    /// The configuration the store holds.
    let configuration: String?
    /// Whether model-level differences may migrate.
    let migratesAutomatically: Bool
    let backend: Backend

    /// A planner from `stored` to `target` (made from `schema`).
    package init(stored: SQLStoreMetadata, target: SQLStoreMetadata, model: ObjectModel, schema: SQLSchema, place: String,
                 configuration: String?, migratesAutomatically: Bool, backend: Backend) {
        self.stored = stored
        self.target = target
        self.model = model
        self.schema = schema
        self.place = place
        self.configuration = configuration
        self.migratesAutomatically = migratesAutomatically
        self.backend = backend
    }

    /// Plans the migration; throws 134100 / 134020 when there cannot be one.
    package func plan() throws(StrataError) -> Plan {
        var plan = Plan()
        plan.rewritesMetadata = !stored.isIdentical(to: target)
        guard plan.rewritesMetadata else { return plan }

        var problems: [String] = []
        var configurationProblems: [String] = []
        diffEntities(changes: &plan.changes, problems: &problems, configurationProblems: &configurationProblems)

        if !problems.isEmpty || !configurationProblems.isEmpty {
            let all = problems + configurationProblems
            let code: StrataError.Code = problems.isEmpty ? .incompatibleSchema : .incompatibleVersionHash
            let what = problems.isEmpty
                ? "holds entities that configuration '\(configuration ?? "default")' does not"
                : "does not fit model '\(model.name)' (version hashes differ)"
            throw StrataError(code, "\(place) \(what): \(all.count) difference(s): " + all.joined(separator: "; "), details: all)
        }
        if !migratesAutomatically && !plan.changes.isEmpty {
            throw StrataError(
                .incompatibleVersionHash,
                "\(place) was written with another version of model '\(model.name)' and automatic migration is off: " + plan.changes.joined(separator: "; "),
                details: plan.changes
            )
        }

        var layoutProblems: [String] = []
        plan.steps = try layoutSteps(problems: &layoutProblems)
        if !layoutProblems.isEmpty {
            throw StrataError(.incompatibleVersionHash, "\(place) cannot be laid out for model '\(model.name)': " + layoutProblems.joined(separator: "; "), details: layoutProblems)
        }
        plan.steps = plan.steps.map { step in
            var step = step
            step.sql = backend.statement(step.sql)
            return step
        }
        return plan
    }

    // MARK: - Model-level differences

    private func diffEntities(changes: inout [String], problems: inout [String], configurationProblems: inout [String]) {
        let storedNames = Set(stored.entities.keys)
        let targetNames = Set(target.entities.keys)
        for name in storedNames.subtracting(targetNames).sorted() {
            if model.entity(named: name) != nil, stored.versionHashes[name] == SQLStoreMetadata.hex(model.versionHash(ofEntity: name)) {
                configurationProblems.append("\(name): entity is in the store but not in configuration '\(configuration ?? "default")'")
            } else if model.entity(named: name) != nil {
                problems.append("\(name): entity is in the store but not in configuration '\(configuration ?? "default")', and changed")
            } else {
                problems.append("\(name): entity removed from the model")
            }
        }
        for name in targetNames.subtracting(storedNames).sorted() {
            changes.append("\(name): entity added")
        }
        for name in storedNames.intersection(targetNames).sorted() {
            guard let old = stored.entities[name], let new = target.entities[name], old != new else { continue }
            diff(entity: name, old: old, new: new, changes: &changes, problems: &problems)
        }
    }

    private func diff(entity: String, old: SQLStoreMetadata.EntityShape, new: SQLStoreMetadata.EntityShape, changes: inout [String], problems: inout [String]) {
        if old.parent != new.parent {
            problems.append("\(entity): parent entity changed from \(old.parent ?? "none") to \(new.parent ?? "none")")
        }
        if old.isAbstract != new.isAbstract {
            problems.append("\(entity): abstract flag changed from \(yesNo(old.isAbstract)) to \(yesNo(new.isAbstract))")
        }
        if old.versionHashModifier != new.versionHashModifier {
            problems.append("\(entity): version hash modifier changed from \(quoted(old.versionHashModifier)) to \(quoted(new.versionHashModifier))")
        }
        for name in Set(old.attributes.keys).union(new.attributes.keys).sorted() {
            let property = "\(entity).\(name)"
            switch (old.attributes[name], new.attributes[name]) {
            case (let before?, nil):
                if new.relationships[name] != nil {
                    problems.append("\(property): attribute (\(before.type)) became a relationship")
                } else {
                    problems.append("\(property): attribute removed (was \(before.type))")
                }
            case (nil, let after?):
                if old.relationships[name] != nil { continue } // reported with the relationships
                let attribute = model.entity(named: entity)?.attributes.first { $0.name == name }
                if after.isOptional {
                    changes.append("\(property): optional attribute added (\(after.type))")
                } else if let attribute, !attribute.defaultValue.isNull {
                    changes.append("\(property): attribute with default \(attribute.defaultValue) added (\(after.type))")
                } else {
                    problems.append("\(property): mandatory attribute added without a default value (\(after.type))")
                }
            case (let before?, let after?) where before != after:
                if before.type != after.type {
                    problems.append("\(property): attribute type changed from \(before.type) to \(after.type)")
                }
                if before.isOptional && !after.isOptional {
                    problems.append("\(property): attribute became mandatory")
                } else if !before.isOptional && after.isOptional {
                    changes.append("\(property): attribute became optional")
                }
                if before.versionHashModifier != after.versionHashModifier {
                    problems.append("\(property): version hash modifier changed from \(quoted(before.versionHashModifier)) to \(quoted(after.versionHashModifier))")
                }
            default:
                break
            }
        }
        for name in Set(old.relationships.keys).union(new.relationships.keys).sorted() {
            let property = "\(entity).\(name)"
            switch (old.relationships[name], new.relationships[name]) {
            case (let before?, nil):
                if new.attributes[name] != nil {
                    problems.append("\(property): relationship (to \(before.destination)) became an attribute")
                } else {
                    problems.append("\(property): relationship removed (was \(before.isToMany ? "to-many" : "to-one") to \(before.destination))")
                }
            case (nil, let after?):
                if old.attributes[name] != nil {
                    problems.append("\(property): attribute became a relationship (to \(after.destination))")
                } else if after.isOptional && after.minCount == 0 {
                    changes.append("\(property): optional relationship added (to \(after.destination))")
                } else {
                    problems.append("\(property): mandatory relationship added (to \(after.destination))")
                }
            case (let before?, let after?) where before != after:
                var relaxed = before
                relaxed.isOptional = after.isOptional
                if relaxed == after && after.isOptional {
                    changes.append("\(property): relationship became optional")
                } else {
                    problems.append("\(property): relationship changed (" + relationshipDifferences(before, after).joined(separator: ", ") + ")")
                }
            default:
                break
            }
        }
    }

    private func relationshipDifferences(_ a: SQLStoreMetadata.RelationshipShape, _ b: SQLStoreMetadata.RelationshipShape) -> [String] {
        var out: [String] = []
        if a.destination != b.destination { out.append("destination \(a.destination) → \(b.destination)") }
        if a.inverse != b.inverse { out.append("inverse \(a.inverse ?? "none") → \(b.inverse ?? "none")") }
        if a.isToMany != b.isToMany { out.append("to-many \(yesNo(a.isToMany)) → \(yesNo(b.isToMany))") }
        if a.isOrdered != b.isOrdered { out.append("ordered \(yesNo(a.isOrdered)) → \(yesNo(b.isOrdered))") }
        if a.isOptional != b.isOptional { out.append("optional \(yesNo(a.isOptional)) → \(yesNo(b.isOptional))") }
        if a.minCount != b.minCount { out.append("minCount \(a.minCount) → \(b.minCount)") }
        if a.maxCount != b.maxCount { out.append("maxCount \(a.maxCount) → \(b.maxCount)") }
        if a.versionHashModifier != b.versionHashModifier {
            out.append("version hash modifier \(quoted(a.versionHashModifier)) → \(quoted(b.versionHashModifier))")
        }
        return out
    }

    private func yesNo(_ flag: Bool) -> String { flag ? "YES" : "NO" }
    private func quoted(_ text: String?) -> String { text.map { "'\($0)'" } ?? "none" }

    // MARK: - Layout

    private static func q(_ identifier: String) -> String { SQLSchema.quote(identifier) }

    /// The statements turning the stored layout into the target one.
    private func layoutSteps(problems: inout [String]) throws(StrataError) -> [Step] {
        let old = stored.layout
        let new = target.layout
        var steps: [Step] = []
        var temporaryCount = 0
        func temporaryName() -> String {
            temporaryCount += 1
            // In the namespace no layout uses (``SQLSchema/reservedPrefix``).
            return SQLSchema.reservedPrefix + "MIGRATING_\(temporaryCount)"
        }

        // 1. Indexes that are gone or changed.
        let newIndexes = Set(new.indexes.map { $0.name + "\u{0}" + $0.sql })
        let oldIndexes = Set(old.indexes.map { $0.name + "\u{0}" + $0.sql })
        for index in old.indexes where !newIndexes.contains(index.name + "\u{0}" + index.sql) {
            steps.append(Step(sql: "DROP INDEX IF EXISTS \(Self.q(index.name))", changesData: false))
        }

        // 2. Match tables by identity; plan renames, new tables and columns.
        let oldTables = Dictionary(old.tables.map { ($0.rootEntity, $0) }, uniquingKeysWith: { a, _ in a })
        let newRoots = Set(new.tables.map(\.rootEntity))
        for table in old.tables where !newRoots.contains(table.rootEntity) {
            problems.append("table \(table.name) of hierarchy \(table.rootEntity) would no longer be used")
        }
        let joinKey: (SQLStoreMetadata.JoinTable) -> String = { $0.entity + "\u{0}" + $0.relationship }
        let oldJoins = Dictionary(old.joinTables.map { (joinKey($0), $0) }, uniquingKeysWith: { a, _ in a })
        let newJoinKeys = Set(new.joinTables.map(joinKey))
        for join in old.joinTables where !newJoinKeys.contains(joinKey(join)) {
            problems.append("join table \(join.name) of \(join.entity).\(join.relationship) would no longer be used")
        }

        var tableRenames: [(from: String, to: String)] = []
        var createdTables: [String] = []
        var createdJoins: [SQLStoreMetadata.JoinTable] = []
        var columnRenames: [(table: String, from: String, to: String, column: SQLStoreMetadata.Column)] = []
        var addedColumns: [(table: SQLStoreMetadata.Table, column: SQLStoreMetadata.Column)] = []

        // Stored rows keep their entity numbers.
        for (entity, number) in old.entityNumbers.sorted(by: { $0.key < $1.key }) {
            if let renumbered = new.entityNumbers[entity], renumbered != number {
                problems.append("\(entity): entity number would change from \(number) to \(renumbered)")
            }
        }
        let storedNumbers = Dictionary(old.entityNumbers.map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        for (entity, number) in new.entityNumbers.sorted(by: { $0.key < $1.key }) where old.entityNumbers[entity] == nil {
            if let holder = storedNumbers[number] {
                problems.append("\(entity): entity number \(number) is already \(holder)'s")
            }
        }

        for table in new.tables {
            guard let before = oldTables[table.rootEntity] else {
                createdTables.append(table.name)
                continue
            }
            if before.name != table.name { tableRenames.append((before.name, table.name)) }
            let oldColumns = Dictionary(before.columns.map { ($0.role, $0) }, uniquingKeysWith: { a, _ in a })
            let newRoles = Set(table.columns.map(\.role))
            for column in before.columns where !newRoles.contains(column.role) {
                problems.append("\(column.role.displayName): column \(before.name).\(column.name) would no longer be used")
            }
            for column in table.columns {
                guard let existing = oldColumns[column.role] else {
                    addedColumns.append((table, column))
                    continue
                }
                if existing.type != column.type {
                    problems.append("\(column.role.displayName): column \(before.name).\(column.name) type changes from \(existing.type) to \(column.type)")
                }
                if existing.name != column.name { columnRenames.append((table.name, existing.name, column.name, column)) }
            }
        }
        for join in new.joinTables {
            guard let before = oldJoins[joinKey(join)] else {
                createdJoins.append(join)
                continue
            }
            if before.sourceColumn != join.sourceColumn || before.destinationColumn != join.destinationColumn
                || before.orderColumn != join.orderColumn || before.inverseOrderColumn != join.inverseOrderColumn {
                problems.append("\(join.entity).\(join.relationship): join table \(before.name) columns change")
            }
            if before.name != join.name { tableRenames.append((before.name, join.name)) }
        }
        guard problems.isEmpty else { return [] }

        // 3. Renames in two phases through temporary names (a name may move
        //    to another table or column of the same migration).
        var secondPhase: [Step] = []
        for rename in tableRenames {
            let temporary = temporaryName()
            steps.append(Step(sql: "ALTER TABLE \(Self.q(rename.from)) RENAME TO \(Self.q(temporary))", changesData: true))
            secondPhase.append(Step(sql: "ALTER TABLE \(Self.q(temporary)) RENAME TO \(Self.q(rename.to))", changesData: true))
        }
        steps += secondPhase
        secondPhase = []
        for rename in columnRenames {
            // The companions of a column are named after it, and move with it.
            var old = rename.column
            old.name = rename.from
            let pairs = [(rename.from, rename.to)] + zip(backend.companions(old), backend.companions(rename.column)).map { ($0.name, $1.name) }
            for (from, to) in pairs {
                let temporary = temporaryName()
                steps.append(Step(sql: "ALTER TABLE \(Self.q(rename.table)) RENAME COLUMN \(Self.q(from)) TO \(Self.q(temporary))", changesData: true))
                secondPhase.append(Step(sql: "ALTER TABLE \(Self.q(rename.table)) RENAME COLUMN \(Self.q(temporary)) TO \(Self.q(to))", changesData: true))
            }
        }
        steps += secondPhase

        // 4. New tables (statements from the target schema) and their key rows.
        let statements = backend.createStatements
        for (i, table) in schema.tables.enumerated() where createdTables.contains(table.name) {
            steps.append(Step(sql: statements[i], changesData: true))
            steps.append(Step(sql: backend.insertKeyRow, arguments: [.text(table.rootEntity)], changesData: true))
        }
        for (j, join) in schema.joinTables.enumerated() where createdJoins.contains(where: { $0.name == join.name }) {
            steps.append(Step(sql: statements[schema.tables.count + j], changesData: true))
        }

        // 5. New columns of existing tables.
        for (table, column) in addedColumns {
            steps.append(Step(sql: "ALTER TABLE \(Self.q(table.name)) ADD COLUMN \(Self.q(column.name)) \(column.type)", changesData: true))
            for companion in backend.companions(column) {
                steps.append(Step(sql: "ALTER TABLE \(Self.q(table.name)) ADD COLUMN \(Self.q(companion.name)) \(companion.type)", changesData: true))
            }
        }

        // 6. Defaults of added attributes, for the rows that have them.
        for (table, column) in addedColumns where column.role.kind == "attribute" {
            guard let declaring = column.role.entity, let name = column.role.name,
                  let attribute = model.attribute(named: name, in: declaring), !attribute.defaultValue.isNull else { continue }
            let holders = table.entities.filter { model.isEntity($0, kindOf: declaring) }
            let numbers = holders.compactMap { new.entityNumbers[$0] }
            guard !numbers.isEmpty else { continue }
            let value = try SQLAttributeEncoder.encode(attribute.defaultValue, type: attribute.type, entity: declaring, attribute: name)
            let assignments = [(column.name, value)] + backend.companions(column).map { ($0.name, $0.value(value)) }
            steps.append(Step(
                sql: "UPDATE \(Self.q(table.name)) SET " + assignments.map { "\(Self.q($0.0)) = ?" }.joined(separator: ", ")
                    + " WHERE \(Self.q("Z_ENT")) IN (" + numbers.map { _ in "?" }.joined(separator: ", ") + ")",
                arguments: assignments.map(\.1) + numbers.map(SQLValue.integer),
                changesData: true
            ))
        }

        // 7. Indexes that are new or changed.
        for index in new.indexes where !oldIndexes.contains(index.name + "\u{0}" + index.sql) {
            steps.append(Step(sql: index.sql, changesData: false))
        }
        return steps
    }
}
