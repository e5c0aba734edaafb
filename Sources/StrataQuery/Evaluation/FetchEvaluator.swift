import Foundation
import StrataModel

/// A ``ResolvedFetch`` run in memory: entity restriction, predicate, sort,
/// offset and limit, with the same results, in the same order, as the SQL
/// ``SQLQueryCompiler`` produces for the same fetch over the same data.
///
/// Sorting: each key compares values in the attribute's own order (strings
/// by Unicode scalars, `caseInsensitive` on their case-folded form); nil
/// sorts first ascending and last descending (SQLite's NULL order); ties
/// are broken by primary key ascending, and objects without one (unsaved)
/// come after those with one, in the order given.
public struct FetchEvaluator<Accessor: ObjectGraphAccessor> {
    /// The fetch.
    public let fetch: ResolvedFetch
    /// The accessor objects are read through.
    public let accessor: Accessor
    private let entities: [String]
    private let predicate: PredicateEvaluator<Accessor>
    private let sortKeys: [SortKeyExtractor<Accessor.Object>]

    /// Compiles `fetch` against `model`.
    public init(
        _ fetch: ResolvedFetch,
        model: ObjectModel,
        accessor: Accessor,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(StrataError) {
        guard model.entity(named: fetch.entityName) != nil else {
            throw StrataError(.predicateType, "unknown entity '\(fetch.entityName)'")
        }
        if let limit = fetch.limit, limit < 0 {
            throw StrataError(.invalidValue, "fetch limit \(limit) is negative")
        }
        guard fetch.offset >= 0 else {
            throw StrataError(.invalidValue, "fetch offset \(fetch.offset) is negative")
        }
        self.fetch = fetch
        self.accessor = accessor
        self.entities = fetch.includesSubentities ? model.hierarchy(of: fetch.entityName) : [fetch.entityName]
        self.predicate = try PredicateEvaluator(fetch.predicate, entity: fetch.entityName, model: model, accessor: accessor, now: now)
        let compiler = EvaluationCompiler(model: model, accessor: accessor, now: now)
        self.sortKeys = try fetch.sortKeys.map { key throws(StrataError) in
            try SortKeyExtractor(key, entity: fetch.entityName, compiler: compiler)
        }
    }

    /// Compiles and runs `fetch` over `objects` in one call.
    public static func run<S: Sequence>(
        _ fetch: ResolvedFetch,
        model: ObjectModel,
        over objects: S,
        accessor: Accessor
    ) throws(StrataError) -> [Accessor.Object] where S.Element == Accessor.Object {
        try FetchEvaluator(fetch, model: model, accessor: accessor).run(over: objects)
    }

    /// Whether `object` is of the fetched entities and satisfies the predicate.
    public func matches(_ object: Accessor.Object) throws(StrataError) -> Bool {
        // A linear scan with `==` (identical string storage compares at
        // once) beats hashing the name for the usual one to three entities.
        let name = accessor.entityName(of: object)
        guard entities.contains(where: { $0 == name }) else { return false }
        return try predicate.evaluate(object)
    }

    /// The fetch's results among `objects`: filtered, sorted, windowed.
    public func run<S: Sequence>(over objects: S) throws(StrataError) -> [Accessor.Object] where S.Element == Accessor.Object {
        var matching: [Accessor.Object] = []
        for object in objects { if try matches(object) { matching.append(object) } }
        let sorted = try sort(matching)
        return window(sorted)
    }

    /// How many results ``run(over:)`` returns.
    public func count<S: Sequence>(over objects: S) throws(StrataError) -> Int where S.Element == Accessor.Object {
        var count = 0
        for object in objects { if try matches(object) { count += 1 } }
        let afterOffset = max(0, count - fetch.offset)
        return fetch.limit.map { min($0, afterOffset) } ?? afterOffset
    }

    /// Sorts objects by the fetch's keys, then by primary key.
    public func sort(_ objects: [Accessor.Object]) throws(StrataError) -> [Accessor.Object] {
        guard objects.count > 1 else { return objects }
        // Decorate: one typed, contiguous column per key (no per-comparison
        // boxing), then sort positions.
        var columns: [SortColumn] = []
        columns.reserveCapacity(sortKeys.count)
        for key in sortKeys { columns.append(try key.column(for: objects)) }
        var primaryKeys: [Int64] = []
        var saved: [Bool] = []
        primaryKeys.reserveCapacity(objects.count)
        saved.reserveCapacity(objects.count)
        for object in objects {
            let key = accessor.primaryKey(of: object)
            primaryKeys.append(key ?? 0)
            saved.append(key != nil)
        }
        if columns.isEmpty, saved.allSatisfy({ $0 }), zip(primaryKeys, primaryKeys.dropFirst()).allSatisfy({ $0 < $1 }) {
            return objects   // already in primary-key order (the usual storage order)
        }
        var order = Array(objects.indices)
        order.sort { a, b in
            for column in columns {
                let c = column.compare(a, b)
                if c != 0 { return c < 0 }
            }
            switch (saved[a], saved[b]) {
            case (true, true): return primaryKeys[a] != primaryKeys[b] ? primaryKeys[a] < primaryKeys[b] : a < b
            case (true, false): return true
            case (false, true): return false
            case (false, false): return a < b
            }
        }
        return order.map { objects[$0] }
    }

    private func window(_ objects: [Accessor.Object]) -> [Accessor.Object] {
        let start = min(fetch.offset, objects.count)
        let end = fetch.limit.map { min(objects.count, start + $0) } ?? objects.count
        return Array(objects[start..<end])
    }
}

/// One compiled sort key: reads each object's value (folded when
/// case-insensitive) into a typed ``SortColumn``.
struct SortKeyExtractor<Object> {
    let value: (Object) throws(StrataError) -> PropertyValue
    private let type: AttributeType
    private let caseInsensitive: Bool
    private let ascending: Bool

    init<Accessor: ObjectGraphAccessor>(_ key: QuerySortKey, entity: String, compiler: EvaluationCompiler<Accessor>) throws(StrataError) where Accessor.Object == Object {
        _ = try NativeOrder.comparator(for: key.attribute.type)
        value = try compiler.value(.attribute(key.steps, key.attribute), entity: entity)
        type = key.attribute.type
        caseInsensitive = key.caseInsensitive && (type == .string || type == .uri)
        ascending = key.ascending
    }

    /// The key's values for `objects`, in order.
    func column(for objects: [Object]) throws(StrataError) -> SortColumn {
        var builder = SortColumn.Builder(type: type, capacity: objects.count)
        for object in objects {
            var v = try value(object)
            if caseInsensitive, let text = DomainValue.text(v) { v = .string(StringFolding.fold(text, .caseInsensitive)) }
            builder.append(v)
        }
        return builder.build(ascending: ascending)
    }
}
