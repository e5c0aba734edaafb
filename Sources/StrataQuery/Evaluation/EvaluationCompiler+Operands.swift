import Foundation
import StrataModel

extension EvaluationCompiler {
    /// An operand as a closure producing its model value: attributes read
    /// through to-one paths, objects as `.object(ID)`, aggregates (`@count`
    /// `.integer`, `@sum` in the attribute's numeric kind, `@avg` `.double`
    /// or `.decimal`, `@min`/`@max` in the attribute's type), subquery counts
    /// and derivation functions.
    func value(_ operand: QueryOperand, entity: String) throws(StrataError) -> ValueGetter {
        switch operand {
        case .constant(let value):
            return { _ in value }
        case .list:
            throw StrataError(.predicateType, "a list is not a single value")
        case .attribute(let steps, let attribute):
            let navigate = try navigation(steps)
            let owner = steps.last?.destinationEntity ?? entity
            let key = try accessor.attributeKey(attribute, entity: owner)
            let accessor = self.accessor
            if steps.isEmpty {
                return { accessor.value(key, of: $0) }
            }
            return { object in navigate(object).map { accessor.value(key, of: $0) } ?? .null }
        case .object(let steps):
            let navigate = try navigation(steps)
            let accessor = self.accessor
            return { object in navigate(object).map { .object(accessor.objectID(of: $0)) } ?? .null }
        case .aggregate(let function, let path, let attribute):
            _ = try OperandTyping.valueType(of: operand)
            return try aggregate(function, path, attribute, entity: entity)
        case .subqueryCount(let path, let inner):
            let collection = try self.collection(path, entity: entity)
            let test = try predicate(inner, entity: path.toMany.destinationEntity)
            return { object throws(StrataError) in
                var count: Int64 = 0
                for destination in collection(object) { if try test(destination) { count += 1 } }
                return .integer(count)
            }
        case .function(let function, let arguments):
            return try self.function(function, arguments, entity: entity)
        }
    }

    // MARK: - Aggregates

    private func aggregate(_ function: AggregateFunction, _ path: CollectionPath, _ attribute: AttributeDescription?, entity: String) throws(StrataError) -> ValueGetter {
        if function == .count {
            let count = try collectionCount(path, entity: entity)
            return { .integer(Int64(count($0))) }
        }
        guard let attribute else {
            throw StrataError(.predicateType, "\(function.rawValue) needs an attribute")
        }
        let collection = try self.collection(path, entity: entity)
        let key = try accessor.attributeKey(attribute, entity: path.toMany.destinationEntity)
        let accessor = self.accessor
        let type = attribute.type
        let name = attribute.name
        switch function {
        case .count:
            return { .integer(Int64(collection($0).count)) }
        case .sum, .avg:
            let isAverage = function == .avg
            if type.isInteger || type == .boolean {
                return { object throws(StrataError) in
                    var sum: Int64 = 0
                    var count = 0
                    for destination in collection(object) {
                        guard let v = DomainValue.integer(accessor.value(key, of: destination)) else { continue }
                        let (result, overflow) = sum.addingReportingOverflow(v)
                        if overflow { throw StrataError(.invalidValue, "@sum of '\(name)' overflows a 64-bit integer") }
                        sum = result
                        count += 1
                    }
                    if isAverage { return count == 0 ? .null : .double(Double(sum) / Double(count)) }
                    return .integer(sum)
                }
            }
            if type == .decimal {
                return { object in
                    var accumulator = DecimalAccumulator()
                    for destination in collection(object) {
                        if let v = DomainValue.decimal(accessor.value(key, of: destination)) { accumulator.add(v) }
                    }
                    let result = isAverage ? accumulator.average : accumulator.total
                    return result.map(PropertyValue.decimal) ?? .null
                }
            }
            return { object in
                var sum = ExactDoubleSum()
                for destination in collection(object) {
                    if let v = DomainValue.double(accessor.value(key, of: destination)) { sum.add(v) }
                }
                if isAverage {
                    guard sum.count > 0 else { return .null }
                    let average = sum.value / Double(sum.count)
                    return average.isNaN ? .null : .double(average)
                }
                let total = sum.value
                return total.isNaN ? .null : .double(total)
            }
        case .min, .max:
            let compare = try NativeOrder.comparator(for: type)
            let wantsMax = function == .max
            return { object in
                var best: PropertyValue = .null
                for destination in collection(object) {
                    let v = accessor.value(key, of: destination)
                    guard NativeOrder.isOrdered(v) else { continue }
                    if best.isNull { best = v; continue }
                    let c = compare(v, best)
                    if wantsMax ? c > 0 : c < 0 { best = v }
                }
                return best
            }
        }
    }

    // MARK: - Functions

    private func function(_ function: QueryFunction, _ arguments: [QueryOperand], entity: String) throws(StrataError) -> ValueGetter {
        if function == .now {
            guard arguments.isEmpty else {
                throw StrataError(.predicateType, "now() takes no arguments")
            }
            let now = self.now
            return { _ in .date(now()) }
        }
        guard arguments.count == 1 else {
            throw StrataError(.predicateType, "\(function.rawValue):() takes exactly one argument")
        }
        let argument = try value(arguments[0], entity: entity)
        let transform: @Sendable (String) -> String
        switch function {
        case .canonical: transform = StringFolding.canonical
        case .uppercase: transform = { $0.uppercased() }
        case .lowercase: transform = { $0.lowercased() }
        case .now: transform = { $0 }
        }
        return { object throws(StrataError) in
            switch try argument(object) {
            case .null: return .null
            case .string(let s): return .string(transform(s))
            case .uri(let s): return .string(transform(s))
            case let other:
                throw StrataError(.invalidValue, "\(function.rawValue):() needs a string, got \(other)")
            }
        }
    }
}
