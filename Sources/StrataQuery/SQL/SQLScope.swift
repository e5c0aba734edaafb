import StrataModel

/// One level of a compiled query: a base table under an alias (the fetched
/// table, or a subquery's destination), plus the LEFT JOINs its to-one key
/// paths need (one per distinct path prefix).
final class SQLScope {
    /// The quoted alias of the base table.
    let alias: String
    /// The entity the scope's rows are instances of (statically).
    let entity: String
    /// `"ZBOOK" AS "t0"`, or a join table joined to its destination.
    let base: String
    private(set) var joins: [String] = []
    private var joinAliases: [String: String?] = [:]

    init(alias: String, entity: String, base: String) {
        self.alias = alias
        self.entity = entity
        self.base = base
    }

    /// The base and its joins, for a `FROM` clause.
    func fromClause() -> SQLFragment {
        SQLFragment(([base] + joins).joined(separator: " "))
    }

    /// The alias already made for a path key, if any (`.some(nil)`: the path
    /// leads to an entity this store does not hold, so it is always nil).
    func alias(forPath key: String) -> String?? {
        joinAliases[key]
    }

    /// Records a path's alias and its join clause.
    func addJoin(pathKey: String, alias: String?, clause: String?) {
        joinAliases[pathKey] = .some(alias)
        if let clause { joins.append(clause) }
    }
}
