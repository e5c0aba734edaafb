import Foundation
import Logging
import PostgresNIO
import StrataModel
import StrataPostgresTesting
import StrataQuery
import Testing
@testable import StrataPostgres

/// Every attribute type written to and read from a real PostgreSQL in the
/// columns the store creates: the same value back, bit for bit.
@Suite(.enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipComment)), .timeLimit(.minutes(1)))
struct PostgresValueCodingTests {
    static let types: [AttributeType] = [.integer16, .integer32, .integer64, .decimal, .double, .float, .string, .boolean, .date, .binary, .uuid, .uri, .transformable]

    static func name(_ type: AttributeType) -> String { "v\(type.rawValue.filter(\.isLetter))" }

    static let samples: [AttributeType: [PropertyValue]] = [
        .integer16: [.integer(Int64(Int16.min)), .integer(Int64(Int16.max)), .integer(0)],
        .integer32: [.integer(Int64(Int32.min)), .integer(Int64(Int32.max))],
        .integer64: [.integer(.min), .integer(.max), .integer(-1)],
        .decimal: ["12345678901234567890.123456789", "-0.5", "0.00000000000000000001", "0", "99999999999999999999999999999999999999",
                   "-0.1", "1e100", "7.50", "3.14159265358979323846264338327950288",
                   "340282366920938463463374607431768211455", "-300000000000000000000000000000000000001e-20", "1e-128", "1e127"].map { .decimal(Decimal(string: $0, locale: nil) ?? 0) },
        .double: [.double(0.1), .double(-1.5), .double(1e300), .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude), .double(0.30000000000000004), .double(-0.0)],
        .float: [.double(Double(Float(0.1))), .double(3.25)],
        .string: [.string("Crème brûlée 😀"), .string(""), .string("line\nbreak\ttab"), .string("quote ' and \" and \\"), .string("e\u{301}")],
        .boolean: [.boolean(true), .boolean(false)],
        .date: [.date(Date(timeIntervalSinceReferenceDate: 123_456_789.123_456)), .date(Date(timeIntervalSinceReferenceDate: -1e9))],
        .binary: [.binary(Data([0, 1, 2, 255])), .binary(Data())],
        .uuid: [.uuid(UUID())],
        .uri: [.uri("https://example.com/ü?q=1")],
        .transformable: [.binary(Data(repeating: 7, count: 1000))],
    ]

    @Test("Every attribute type round-trips exactly, NULL included; a string holding U+0000 is refused, nothing written")
    func everyTypeRoundTrips() async throws {
        let model = ObjectModel(name: "Values", entities: [EntityDescription(
            name: "Cell", attributes: Self.types.map { AttributeDescription(name: Self.name($0), type: $0, isOptional: true) })])
        let schema = try PostgresSchema(layout: try SQLSchema(model: model))
        let table = try #require(schema.layout.tables.first)
        let schemaName = PostgresTestServer.uniqueSchemaName("strata_values")
        try await PostgresTestServer.withClient(searchPath: schemaName) { client in
            try await PostgresTestServer.dropAbandonedSchemas("strata_values", client: client)
            try await client.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \"\(schemaName)\""))
            defer { Task { _ = try? await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(schemaName)\" CASCADE")) } }
            for statement in schema.createStatements() { try await client.query(PostgresQuery(unsafeSQL: statement)) }
            var key: Int64 = 0
            var expected: [Int64: (AttributeType, PropertyValue)] = [:]
            for type in Self.types {
                for value in (Self.samples[type] ?? []) + [.null] {
                    key += 1
                    let column = try #require(schema.layout.column(forAttribute: Self.name(type), in: "Cell"))
                    var bindings = PostgresBindings()
                    bindings.append(key)
                    try PostgresValueCoding.append(SQLValueCoding.sqlValue(for: value), to: &bindings)
                    try await client.query(PostgresQuery(unsafeSQL: "INSERT INTO \"\(table.name)\" (\"Z_PK\", \"Z_ENT\", \"Z_OPT\", \"\(column)\") VALUES ($1, 1, 1, $2)", binds: bindings))
                    expected[key] = (type, value)
                }
            }
            let columns = table.columns.map { "\"\($0.name)\"" }.joined(separator: ", ")
            var seen = 0
            for try await row in try await client.query(PostgresQuery(unsafeSQL: "SELECT \(columns) FROM \"\(table.name)\" ORDER BY \"Z_PK\"")) {
                let cells = row.makeRandomAccess()
                let pk = try cells[0].decode(Int64.self)
                let (type, value) = try #require(expected[pk])
                let index = try #require(table.columns.firstIndex { $0.name == schema.layout.column(forAttribute: Self.name(type), in: "Cell") })
                let read = try PostgresValueCoding.propertyValue(from: cells[index], type: type)
                #expect(read == value, "\(type.rawValue): wrote \(value), read \(read)")
                if case .double(let a) = value, case .double(let b) = read { #expect(a.bitPattern == b.bitPattern, "\(a) read as \(b)") }
                if case .date(let a) = value, case .date(let b) = read {
                    #expect(a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern)
                }
                seen += 1
            }
            #expect(seen == expected.count)
            // U+0000 in text: refused before anything is sent.
            var bindings = PostgresBindings()
            #expect(throws: StrataError.self) { try PostgresValueCoding.append(SQLValueCoding.sqlValue(for: PropertyValue.string("a\u{0}b")), to: &bindings) }
            #expect(bindings.count == 0)
        }
    }

    @Test("A numeric no Decimal holds is refused with the column's name, never trapped on")
    func numericOutOfDecimalRangeIsRefused() async throws {
        try await PostgresTestServer.withClient { client in
            for (literal, fits) in [("1e200", false), ("-1e-200", false), ("'NaN'", false), ("123456789012345678901234567890123456789012", false),
                                    ("340282366920938463463374607431768211456", false), ("15e-129", false), ("1e127", true), ("-0.000001", true),
                                    ("340282366920938463463374607431768211455", true)] {
                var read: PropertyValue?
                var failure: StrataError?
                for try await row in try await client.query(PostgresQuery(unsafeSQL: "SELECT CAST(\(literal) AS numeric) AS amount")) {
                    do {
                        read = try PostgresValueCoding.propertyValue(from: row.makeRandomAccess()[0], type: .decimal)
                    } catch let error as StrataError {
                        failure = error
                    }
                }
                if fits {
                    #expect(read != nil && failure == nil, "\(literal)")
                } else {
                    #expect(failure?.code == .invalidValue, "\(literal): \(String(describing: read))")
                    #expect(failure?.message.contains("amount") == true)
                }
            }
        }
    }
}
