import Foundation
import GRDB
import StrataModel
import StrataStore
import StrataQuery

/// The SQL functions compiled queries call, implemented by the same Swift
/// code as the in-memory evaluator. Stores register them on every
/// connection, from `Configuration.prepareDatabase`:
///
/// ```swift
/// var configuration = Configuration()
/// configuration.prepareDatabase { db in SQLiteFunctions.register(on: db) }
/// ```
///
/// | function | meaning |
/// |---|---|
/// | `strata_fold(x, options)` | ``StringFolding/fold(_:_:)`` of text (`options`: 1 `[c]`, 2 `[d]`, 3 `[cd]`); other values unchanged |
/// | `strata_strop(op, subject, needle)` | ``StringOperators`` (`op`: 1 BEGINSWITH, 2 ENDSWITH, 3 CONTAINS) → 1/0, NULL if either is NULL |
/// | `strata_like(subject, pattern)` | ``LikePattern`` whole-string match → 1/0 or NULL |
/// | `strata_matches(subject, pattern, caseInsensitive)` | ``RegexCache`` whole-string match → 1/0 or NULL; an invalid pattern is an SQL error carrying the ``StrataError`` (see ``strataError(from:)``) |
/// | `strata_decimal_key(x)` | the ``DecimalKey`` of an INTEGER or REAL (TEXT is taken to be a key already) |
/// | `strata_fsum(x)` (aggregate) | ``ExactDoubleSum`` of non-NULL numbers; 0.0 when none |
/// | `strata_decimal_sum(key)` (aggregate) | key of the sum of decimal keys; key of 0 when none |
/// | `strata_decimal_avg(key)` (aggregate) | key of the average of decimal keys; NULL when none |
///
/// `MIN`/`MAX` need nothing special: key order is numeric order.
public enum SQLiteFunctions {
    /// Registers every function on `db`.
    public static func register(on db: Database) {
        db.add(function: fold)
        db.add(function: strop)
        db.add(function: like)
        db.add(function: matches)
        db.add(function: decimalKey)
        db.add(function: fsum)
        db.add(function: decimalSum)
        db.add(function: decimalAverage)
    }

    /// The ``StrataError`` a failed statement carries when one of these
    /// functions failed (its message is the error's description), if any.
    public static func strataError(from error: any Error) -> StrataError? {
        if let error = error as? StrataError { return error }
        guard let error = error as? DatabaseError, let message = error.message,
              let range = message.range(of: "error ") else { return nil }
        let rest = message[range.upperBound...]
        guard let colon = rest.firstIndex(of: ":"), let code = Int(rest[..<colon]) else { return nil }
        let text = rest[rest.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        return StrataError(StrataError.Code(rawValue: code), text)
    }

    // MARK: - Scalar functions

    static let fold = DatabaseFunction("strata_fold", argumentCount: 2, pure: true) { values in
        guard let text = SQLiteValueCoding.string(values[0]) else { return values[0] }
        return SQLiteValueCoding.text(StringFolding.fold(text, options(values[1])))
    }

    static let strop = DatabaseFunction("strata_strop", argumentCount: 3, pure: true) { values in
        guard case .int64(let code) = values[0].storage, let op = StringOperators.Operator(rawValue: Int(code)) else {
            throw StrataError(.unsupported, "strata_strop: unknown operator \(values[0])")
        }
        guard let subject = SQLiteValueCoding.string(values[1]), let needle = SQLiteValueCoding.string(values[2]) else {
            return nil
        }
        return StringOperators.evaluate(op, subject, needle) ? 1 : 0 as Int64
    }

    static let like = DatabaseFunction("strata_like", argumentCount: 2, pure: true) { values in
        guard let subject = SQLiteValueCoding.string(values[0]), let pattern = SQLiteValueCoding.string(values[1]) else {
            return nil
        }
        return LikePattern.matches(subject, pattern: pattern) ? 1 : 0 as Int64
    }

    static let matches = DatabaseFunction("strata_matches", argumentCount: 3, pure: true) { values in
        guard let subject = SQLiteValueCoding.string(values[0]), let pattern = SQLiteValueCoding.string(values[1]) else {
            return nil
        }
        let caseInsensitive: Bool
        if case .int64(let flag) = values[2].storage { caseInsensitive = flag != 0 } else { caseInsensitive = false }
        return try RegexCache.matches(subject, pattern: pattern, caseInsensitive: caseInsensitive) ? 1 : 0 as Int64
    }

    static let decimalKey = DatabaseFunction("strata_decimal_key", argumentCount: 1, pure: true) { values in
        switch values[0].storage {
        case .null: return nil
        case .int64(let v): return DecimalKey.encode(v)
        case .double(let d): return DecimalKey.encode(d)
        case .string(let key): return key
        case .blob: return nil
        }
    }

    // MARK: - Aggregates

    static let fsum = DatabaseFunction("strata_fsum", argumentCount: 1, pure: true, aggregate: FloatSum.self)
    static let decimalSum = DatabaseFunction("strata_decimal_sum", argumentCount: 1, pure: true, aggregate: DecimalSum.self)
    static let decimalAverage = DatabaseFunction("strata_decimal_avg", argumentCount: 1, pure: true, aggregate: DecimalAverage.self)

    struct FloatSum: DatabaseAggregate {
        var sum = ExactDoubleSum()
        mutating func step(_ values: [DatabaseValue]) {
            switch values[0].storage {
            case .double(let d): sum.add(d)
            case .int64(let v): sum.add(Double(v))
            default: break
            }
        }
        func finalize() -> (any DatabaseValueConvertible)? {
            let value = sum.value
            return value.isNaN ? nil : value
        }
    }

    struct DecimalSum: DatabaseAggregate {
        var accumulator = DecimalAccumulator()
        mutating func step(_ values: [DatabaseValue]) throws {
            try SQLiteFunctions.add(values[0], to: &accumulator)
        }
        func finalize() -> (any DatabaseValueConvertible)? {
            accumulator.total.flatMap { DecimalKey.encode($0) }
        }
    }

    struct DecimalAverage: DatabaseAggregate {
        var accumulator = DecimalAccumulator()
        mutating func step(_ values: [DatabaseValue]) throws {
            try SQLiteFunctions.add(values[0], to: &accumulator)
        }
        func finalize() -> (any DatabaseValueConvertible)? {
            accumulator.average.flatMap { DecimalKey.encode($0) }
        }
    }

    private static func add(_ value: DatabaseValue, to accumulator: inout DecimalAccumulator) throws {
        switch value.storage {
        case .null: return
        case .string(let key):
            guard let decimal = DecimalKey.decode(key) else {
                throw StrataError(.invalidValue, "stored decimal key '\(key)' is malformed")
            }
            accumulator.add(decimal)
        case .int64(let v): accumulator.add(DecimalConversion.decimal(from: v))
        case .double(let d): if let decimal = DecimalConversion.decimal(from: d) { accumulator.add(decimal) }
        case .blob: return
        }
    }

    private static func options(_ value: DatabaseValue) -> StringComparisonOptions {
        if case .int64(let bits) = value.storage { return StringComparisonOptions(rawValue: UInt8(truncatingIfNeeded: bits)) }
        return []
    }
}
