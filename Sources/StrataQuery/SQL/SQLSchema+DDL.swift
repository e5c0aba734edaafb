import StrataModel

extension SQLSchema {
    /// The statements creating every table and index, in a fixed order
    /// (hierarchy tables, join tables, indexes). Identifiers are quoted;
    /// the statements contain no values. Partial uniqueness indexes spell
    /// their `Z_ENT` numbers as integer literals: they are schema constants
    /// (SQLite does not allow parameters in index definitions).
    public func createStatements(ifNotExists: Bool = false) -> [String] {
        createStatements(ifNotExists: ifNotExists, keyType: "INTEGER") { column in
            [Self.quote(column.name) + " " + column.sqlType]
        }
    }

    /// ``createStatements(ifNotExists:)`` with another database's types:
    /// each table column's definitions (`"NAME" TYPE`, and any columns kept
    /// beside it) from `columnDefinitions`, join-table keys and positions
    /// of `keyType`.
    package func createStatements(ifNotExists: Bool = false, keyType: String, columnDefinitions: (Column) -> [String]) -> [String] {
        let guardClause = ifNotExists ? "IF NOT EXISTS " : ""
        var statements: [String] = []
        for table in tables {
            let columns = table.columns.flatMap(columnDefinitions)
            statements.append("CREATE TABLE \(guardClause)\(Self.quote(table.name)) (" + columns.joined(separator: ", ") + ")")
        }
        for join in joinTables {
            var columns = [
                Self.quote(join.sourceColumn) + " \(keyType) NOT NULL",
                Self.quote(join.destinationColumn) + " \(keyType) NOT NULL",
            ]
            if let order = join.orderColumn { columns.append(Self.quote(order) + " \(keyType)") }
            if let order = join.inverseOrderColumn { columns.append(Self.quote(order) + " \(keyType)") }
            columns.append("PRIMARY KEY (\(Self.quote(join.sourceColumn)), \(Self.quote(join.destinationColumn)))")
            statements.append("CREATE TABLE \(guardClause)\(Self.quote(join.name)) (" + columns.joined(separator: ", ") + ")")
        }
        for index in indexes {
            let elements = index.elements.map { Self.quote($0.column) + ($0.ascending ? "" : " DESC") }
            var sql = "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(guardClause)\(Self.quote(index.name)) ON \(Self.quote(index.table)) ("
                + elements.joined(separator: ", ") + ")"
            if let numbers = index.entityNumbers {
                sql += " WHERE \(Self.quote("Z_ENT")) IN (" + numbers.map(String.init).joined(separator: ", ") + ")"
            }
            statements.append(sql)
        }
        return statements
    }
}
