import Foundation
import PostgresNIO
import StrataModel
import StrataQuery

/// ``SQLValue``s as PostgreSQL binds them: integers `int8`, reals `float8`,
/// decimals `numeric`, text `text`, bytes `bytea`, UUIDs `uuid`.
///
/// PostgreSQL's `text` cannot hold U+0000: such a string is refused with
/// ``StrataError/Code/invalidValue`` (the SQLite store keeps it as bytes;
/// a PostgreSQL store never stores a string it could not give back whole).
package enum PostgresValueCoding {
    /// Appends `value` to `bindings`.
    package static func append(_ value: SQLValue, to bindings: inout PostgresBindings) throws(StrataError) {
        switch value {
        case .null: bindings.appendNull()
        case .integer(let v): bindings.append(v)
        case .real(let d): bindings.append(d)
        case .decimal(let d):
            do { try bindings.append(d) } catch { throw StrataError(.invalidValue, "decimal \(d) cannot be bound as a PostgreSQL numeric: \(error)") }
        case .text(let s):
            guard !SQLValueCoding.containsNUL(s) else {
                throw StrataError(.invalidValue, "a PostgreSQL store cannot hold a string containing U+0000 (PostgreSQL's text cannot)")
            }
            bindings.append(s)
        case .blob(let data):
            do { try bindings.append(data) } catch { throw StrataError(.invalidValue, "\(data.count) bytes cannot be bound as a PostgreSQL bytea: \(error)") }
        case .uuid(let uuid): bindings.append(uuid)
        }
    }

    /// `query` as a PostgreSQL query with its arguments bound.
    package static func query(_ query: CompiledQuery) throws(StrataError) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: query.arguments.count)
        for argument in query.arguments { try append(argument, to: &bindings) }
        return PostgresQuery(unsafeSQL: query.sql, binds: bindings)
    }
}

extension SQLQueryCompiler {
    /// A compiler writing PostgreSQL's SQL over `schema`'s layout.
    package init(postgres schema: PostgresSchema) {
        self.init(schema: schema.layout, dialect: PostgresDialect())
    }
}

extension PostgresValueCoding {
    /// The value of an attribute of `type` read from its column, as the
    /// store wrote it (``PostgresSchema/columnType(_:)``); NULL is `.null`.
    /// Throws ``StrataError/Code/invalidValue`` naming the column when the
    /// stored value does not fit the type (a `numeric` no Decimal holds, a
    /// column of another type).
    package static func propertyValue(from cell: PostgresCell, type: AttributeType) throws(StrataError) -> PropertyValue {
        guard var bytes = cell.bytes else { return .null }
        do {
            switch type {
            case .integer16, .integer32, .integer64:
                return .integer(try cell.decode(Int64.self))
            case .boolean:
                return .boolean(try cell.decode(Int16.self) != 0)
            case .double, .float:
                return .double(try cell.decode(Double.self))
            case .date:
                return .date(Date(timeIntervalSinceReferenceDate: try cell.decode(Double.self)))
            case .decimal:
                guard cell.dataType == .numeric, cell.format == .binary else { break }
                return .decimal(try decimal(fromNumeric: &bytes, column: cell.columnName))
            case .string:
                return .string(try cell.decode(String.self))
            case .uri, .objectID:
                return .uri(try cell.decode(String.self))
            case .uuid:
                return .uuid(try cell.decode(UUID.self))
            case .binary, .transformable, .undefined, .composite:
                return .binary(try cell.decode(Data.self))
            }
        } catch let error as StrataError {
            throw error
        } catch {
            // Falls through to the error below.
        }
        throw StrataError(.invalidValue, "stored value of column \(cell.columnName) (PostgreSQL type \(cell.dataType)) does not fit an attribute of type \(type.rawValue)")
    }

    /// A `numeric` in PostgreSQL's binary form (digit count, weight, sign,
    /// display scale, then base-10000 digits) as a Decimal, exactly; a NaN,
    /// an infinity or a value no Decimal holds is refused.
    static func decimal(fromNumeric buffer: inout ByteBuffer, column: String) throws(StrataError) -> Decimal {
        func refuse(_ why: String) -> StrataError {
            StrataError(.invalidValue, "stored numeric of column \(column) \(why)")
        }
        guard let count = buffer.readInteger(endianness: .big, as: Int16.self),
              let weight = buffer.readInteger(endianness: .big, as: Int16.self),
              let sign = buffer.readInteger(endianness: .big, as: UInt16.self),
              buffer.readInteger(endianness: .big, as: Int16.self) != nil, count >= 0 else {
            throw refuse("is malformed")
        }
        guard sign == 0x0000 || sign == 0x4000 else { throw refuse("is not a finite number") }
        var digits: [UInt8] = []
        digits.reserveCapacity(Int(count) * 4)
        for _ in 0..<count {
            guard let group = buffer.readInteger(endianness: .big, as: Int16.self), (0..<10000).contains(group) else {
                throw refuse("is malformed")
            }
            for divisor in [1000, 100, 10, 1] as [Int16] { digits.append(UInt8((group / divisor) % 10)) }
        }
        // value = digits × 10^exponent, exponent from the last group's place.
        var exponent = (Int(weight) - Int(count) + 1) * 4
        while let last = digits.last, last == 0 { digits.removeLast(); exponent += 1 }
        while let first = digits.first, first == 0 { digits.removeFirst() }
        guard !digits.isEmpty else { return Decimal.zero }
        let significand = String(decoding: digits.map { $0 + UInt8(ascii: "0") }, as: UTF8.self)
        // Decimal's significand is 128 bits (up to 39 digits, at most
        // 2^128 - 1) and its exponent -128...127: anything else would be
        // rounded or refused by Decimal's parser, so it is refused here.
        let fits = digits.count < 39 || (digits.count == 39 && significand <= "340282366920938463463374607431768211455")
        guard fits, (-128...127).contains(exponent),
              let value = Decimal(string: (sign == 0x4000 ? "-" : "") + significand + "e\(exponent)", locale: nil), !value.isNaN else {
            throw refuse("(\(digits.count) digits, exponent \(exponent)) does not fit a Decimal")
        }
        if buffer.readableBytes != 0 { throw refuse("is malformed") }
        return value
    }
}
