import Foundation
import StrataModel

/// The state of one compilation: the schema, the dialect and the alias
/// counter shared by the outer query and its subqueries (aliases are unique
/// in the statement).
final class SQLQueryBuilder {
    let schema: SQLSchema
    let dialect: any SQLDialect
    private var aliasCount = 0

    init(schema: SQLSchema, dialect: any SQLDialect) {
        self.schema = schema
        self.dialect = dialect
    }

    /// A fresh quoted alias (`"t0"`, `"t1"`, …).
    func newAlias() -> String {
        defer { aliasCount += 1 }
        return SQLSchema.quote("t\(aliasCount)")
    }

    static let primaryKey = SQLSchema.quote("Z_PK")

    // MARK: - Fetch parts

    /// The fetched table's scope and ` WHERE …` (entity restriction and predicate).
    func filter(_ fetch: ResolvedFetch) throws(StrataError) -> (SQLScope, SQLFragment) {
        guard let table = schema.table(for: fetch.entityName) else {
            if schema.model.entity(named: fetch.entityName) == nil {
                throw StrataError(.predicateType, "unknown entity '\(fetch.entityName)'")
            }
            throw StrataError(.unsupported, "entity '\(fetch.entityName)' is not held by this store")
        }
        if let limit = fetch.limit, limit < 0 {
            throw StrataError(.invalidValue, "fetch limit \(limit) is negative")
        }
        guard fetch.offset >= 0 else {
            throw StrataError(.invalidValue, "fetch offset \(fetch.offset) is negative")
        }
        let alias = newAlias()
        let scope = SQLScope(alias: alias, entity: fetch.entityName, base: "\(SQLSchema.quote(table.name)) AS \(alias)")
        var conditions: [SQLFragment] = []
        let covered = schema.entities(covering: fetch.entityName, includingSubentities: fetch.includesSubentities)
        if Set(covered) != Set(table.entities) {
            let numbers = covered.compactMap { schema.entityNumber(of: $0) }.sorted()
            let placeholders = SQLFragment.joined(numbers.map { .bind(.integer(Int64($0))) }, separator: ", ")
            conditions.append("\(alias).\(SQLSchema.quote("Z_ENT")) IN (" + placeholders + ")")
        }
        let predicate = try self.predicate(fetch.predicate, scope)
        if predicate.sql != dialect.trueLiteral { conditions.append(predicate) }
        guard !conditions.isEmpty else { return (scope, SQLFragment("")) }
        return (scope, " WHERE " + SQLFragment.joined(conditions, separator: " AND "))
    }

    /// ` ORDER BY …, t0.Z_PK`.
    func orderBy(_ fetch: ResolvedFetch, scope: SQLScope) throws(StrataError) -> SQLFragment {
        var terms: [String] = []
        for key in fetch.sortKeys {
            _ = try NativeOrder.comparator(for: key.attribute.type)
            guard let column = try attributeColumn(key.steps, key.attribute, scope) else { continue }
            let type = key.attribute.type
            let expression = key.caseInsensitive && (type == .string || type == .uri)
                ? try dialect.fold(SQLFragment(column), .caseInsensitive).sql
                : column
            terms.append(dialect.orderTerm(expression, ascending: key.ascending))
        }
        terms.append("\(scope.alias).\(Self.primaryKey) ASC")
        return SQLFragment(" ORDER BY " + terms.joined(separator: ", "))
    }

    /// ` LIMIT ? OFFSET ?` as needed.
    func window(_ fetch: ResolvedFetch) -> SQLFragment {
        var sql = SQLFragment("")
        if let limit = fetch.limit {
            sql += " LIMIT " + SQLFragment.bind(.integer(Int64(limit)))
        } else if fetch.offset > 0 {
            sql += dialect.unlimited
        }
        if fetch.offset > 0 {
            sql += " OFFSET " + SQLFragment.bind(.integer(Int64(fetch.offset)))
        }
        return sql
    }

    // MARK: - Paths

    /// How a relationship met on a path is stored.
    func storage(of step: RelationshipStep, staticEntity: String) throws(StrataError) -> SQLSchema.RelationshipStorage {
        let name = step.relationship.name
        guard let storage = schema.storage(ofRelationship: name, in: step.sourceEntity)
            ?? schema.storage(ofRelationship: name, in: staticEntity) else {
            throw StrataError(.predicateType, "unknown relationship '\(step.sourceEntity).\(name)'")
        }
        if case .transient = storage {
            throw StrataError(.unsupported, "transient relationship '\(step.sourceEntity).\(name)' is not stored; SQL cannot follow it")
        }
        return storage
    }

    /// The alias of the row reached through to-one `steps` (LEFT JOINs added
    /// to `scope` once per distinct prefix); nil when the path leads to an
    /// entity this store does not hold (always nil).
    func pathAlias(_ steps: some Collection<RelationshipStep>, _ scope: SQLScope) throws(StrataError) -> String? {
        var current = scope.alias
        var currentEntity = scope.entity
        var key = ""
        for step in steps {
            key += "\u{0}" + step.sourceEntity + "." + step.relationship.name
            if let existing = scope.alias(forPath: key) {
                guard let alias = existing else { return nil }
                current = alias
                currentEntity = step.destinationEntity
                continue
            }
            guard !step.relationship.isToMany else {
                throw StrataError(.predicateType, "'\(step.sourceEntity).\(step.relationship.name)' is to-many where a to-one is needed")
            }
            switch try storage(of: step, staticEntity: currentEntity) {
            case .foreignKey(_, let column):
                guard let destination = schema.table(for: step.destinationEntity) else {
                    scope.addJoin(pathKey: key, alias: nil, clause: nil)
                    return nil
                }
                let alias = newAlias()
                let clause = "LEFT JOIN \(SQLSchema.quote(destination.name)) AS \(alias) ON \(alias).\(Self.primaryKey) = \(current).\(SQLSchema.quote(column))"
                scope.addJoin(pathKey: key, alias: alias, clause: clause)
                current = alias
                currentEntity = step.destinationEntity
            case .external:
                scope.addJoin(pathKey: key, alias: nil, clause: nil)
                return nil
            default:
                throw StrataError(.predicateType, "'\(step.sourceEntity).\(step.relationship.name)' is not a to-one relationship")
            }
        }
        return current
    }

    /// The primary-key expression of the object reached through to-one
    /// `steps` (the last hop's foreign key, without joining its table); nil
    /// when always nil.
    func objectKey(_ steps: [RelationshipStep], _ scope: SQLScope) throws(StrataError) -> String? {
        guard let last = steps.last else { return "\(scope.alias).\(Self.primaryKey)" }
        guard let alias = try pathAlias(steps.dropLast(), scope) else { return nil }
        let staticEntity = steps.dropLast().last?.destinationEntity ?? scope.entity
        guard !last.relationship.isToMany else {
            throw StrataError(.predicateType, "'\(last.sourceEntity).\(last.relationship.name)' is to-many where a to-one is needed")
        }
        switch try storage(of: last, staticEntity: staticEntity) {
        case .foreignKey(_, let column): return "\(alias).\(SQLSchema.quote(column))"
        case .external: return nil
        default:
            throw StrataError(.predicateType, "'\(last.sourceEntity).\(last.relationship.name)' is not a to-one relationship")
        }
    }

    /// The column expression of an attribute reached through to-one
    /// `steps`; nil when always nil.
    func attributeColumn(_ steps: [RelationshipStep], _ attribute: AttributeDescription, _ scope: SQLScope) throws(StrataError) -> String? {
        if attribute.isTransient {
            throw StrataError(.unsupported, "transient attribute '\(attribute.name)' is not stored; SQL cannot read it")
        }
        guard let alias = try pathAlias(steps, scope) else { return nil }
        let owner = steps.last?.destinationEntity ?? scope.entity
        guard let column = schema.column(forAttribute: attribute.name, in: owner) else {
            throw StrataError(.predicateType, "'\(owner)' has no stored attribute '\(attribute.name)'")
        }
        return "\(alias).\(SQLSchema.quote(column))"
    }

    // MARK: - Collections

    /// The rows of a to-many path, for a subquery.
    struct CollectionSource {
        /// The destinations' scope (its FROM clause includes a join table if any).
        var scope: SQLScope
        /// The condition tying destinations to the source row.
        var link: String
        /// A cheaper FROM clause for counting (the join table alone).
        var countFrom: String
        /// The link condition for ``countFrom``.
        var countLink: String
    }

    /// The destinations of a collection path; nil when always empty (a nil
    /// to-one hop known statically, or a destination this store does not hold).
    func collection(_ path: CollectionPath, _ scope: SQLScope) throws(StrataError) -> CollectionSource? {
        try OperandTyping.checkCollection(path)
        guard let sourceKey = try objectKey(path.toOneSteps, scope) else { return nil }
        let staticEntity = path.toOneSteps.last?.destinationEntity ?? scope.entity
        let destinationEntity = path.toMany.destinationEntity
        switch try storage(of: path.toMany, staticEntity: staticEntity) {
        case .inverseForeignKey(let table, let column, _):
            let alias = newAlias()
            let from = "\(SQLSchema.quote(table)) AS \(alias)"
            let link = "\(alias).\(SQLSchema.quote(column)) = \(sourceKey)"
            let destination = SQLScope(alias: alias, entity: destinationEntity, base: from)
            return CollectionSource(scope: destination, link: link, countFrom: from, countLink: link)
        case .joinTable(let table, let sourceColumn, let destinationColumn, _):
            guard let destinationTable = schema.table(for: destinationEntity) else { return nil }
            let join = newAlias()
            let alias = newAlias()
            let joinFrom = "\(SQLSchema.quote(table)) AS \(join)"
            let from = joinFrom + " JOIN \(SQLSchema.quote(destinationTable.name)) AS \(alias) ON \(alias).\(Self.primaryKey) = \(join).\(SQLSchema.quote(destinationColumn))"
            let link = "\(join).\(SQLSchema.quote(sourceColumn)) = \(sourceKey)"
            let destination = SQLScope(alias: alias, entity: destinationEntity, base: from)
            return CollectionSource(scope: destination, link: link, countFrom: joinFrom, countLink: link)
        case .external:
            return nil
        default:
            throw StrataError(.predicateType, "'\(path.toMany.sourceEntity).\(path.toMany.relationship.name)' is not a to-many relationship")
        }
    }
}
