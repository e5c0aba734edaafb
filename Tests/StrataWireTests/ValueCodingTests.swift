import Foundation
import StrataModel
import StrataWire
import SwiftProtobuf
import Testing

/// A deterministic generator for test bytes.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Typed values on the wire: `PropertyValue.wire` and
/// `PropertyValue(wire:field:)`, through protobuf bytes and back.
@Suite("Value coding")
struct ValueCodingTests {
    /// Value → wire → protobuf bytes → wire → value.
    static func roundTrip(_ value: PropertyValue) throws -> PropertyValue {
        let bytes: [UInt8] = try value.wire.serializedBytes()
        let wire = try Strata_V1_Value(serializedBytes: bytes)
        return try PropertyValue(wire: wire, field: "Test.value")
    }

    static func decimal(_ text: String) -> Decimal {
        Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))!
    }

    /// The WireError that decoding `wire` throws, if any.
    static func decodingError(_ wire: Strata_V1_Value) -> WireError? {
        do {
            _ = try PropertyValue(wire: wire, field: "Book.field")
            return nil
        } catch let error as WireError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    static let storeID = "6F1C2A9E-3B1D-4F7A-9C2E-0A1B2C3D4E5F"

    static let simpleValues: [PropertyValue] = [
        .null,
        .integer(0), .integer(1), .integer(-1), .integer(Int64.max), .integer(Int64.min),
        .integer(Int64(Int16.max)), .integer(Int64(Int32.min)),
        .double(0), .double(1.5), .double(-2.25e-300), .double(.greatestFiniteMagnitude),
        .double(.leastNonzeroMagnitude), .double(.infinity), .double(-.infinity), .double(Double(Float(0.1))),
        .string(""), .string("plain"), .string("ünïcödé 📚 \u{0} tab\tline\n"),
        .boolean(false), .boolean(true),
        .binary(Data()), .binary(Data([0, 255, 1, 254])),
        .uri("https://example.com/a%20b?c=d#e"), .uri(""),
        .uuid(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!),
        .object(ObjectID(storeIdentifier: storeID, entityName: "Book", key: .permanent(42))),
        .object(ObjectID(storeIdentifier: storeID, entityName: "Book", key: .permanent(Int64.max))),
        .object(ObjectID(storeIdentifier: "", entityName: "Feedback", key: .temporary(UUID(uuidString: "A1A2A3A4-B1B2-C1C2-D1D2-E1E2E3E4E5E6")!))),
        .objects([]),
        .objects([
            ObjectID(storeIdentifier: storeID, entityName: "Book", key: .permanent(1)),
            ObjectID(storeIdentifier: storeID, entityName: "Book", key: .permanent(3)),
            ObjectID(storeIdentifier: storeID, entityName: "Book", key: .permanent(2)),
        ]),
    ]

    @Test("Every kind of value round-trips exactly", arguments: simpleValues)
    func roundTrips(value: PropertyValue) throws {
        #expect(try Self.roundTrip(value) == value)
    }

    @Test("Zero values keep their kind: 0, false, \"\" and empty bytes are not nil")
    func zeroValuesAreNotNull() throws {
        for value: PropertyValue in [.integer(0), .double(0), .boolean(false), .string(""), .binary(Data()), .uri(""), .objects([])] {
            let wire = value.wire
            #expect(wire.kind != nil, "\(value) lost its kind")
            #expect(try Self.roundTrip(value) == value)
        }
        #expect(PropertyValue.null.wire.kind == nil)
        #expect(try PropertyValue(wire: Strata_V1_Value(), field: "x") == .null)
    }

    @Test("Doubles keep their bit pattern: -0.0, subnormals and NaN")
    func doubleBits() throws {
        for double in [-0.0, 0.0, Double.leastNonzeroMagnitude, -Double.leastNormalMagnitude, 0.1 + 0.2, Double.pi] {
            guard case .double(let back) = try Self.roundTrip(.double(double)) else {
                Issue.record("\(double) came back as another kind")
                continue
            }
            #expect(back.bitPattern == double.bitPattern)
        }
        guard case .double(let nan) = try Self.roundTrip(.double(.nan)) else {
            Issue.record("NaN came back as another kind")
            return
        }
        #expect(nan.isNaN)
    }

    // MARK: Decimal

    @Test("Decimal 0.1 + 0.2 is exactly 0.3 on the wire and back")
    func decimalSum() throws {
        let sum = Self.decimal("0.1") + Self.decimal("0.2")
        #expect(sum.wireText == "0.3")
        #expect(PropertyValue.decimal(sum).wire.decimal == "0.3")
        #expect(try Self.roundTrip(.decimal(sum)) == .decimal(Self.decimal("0.3")))
    }

    static let decimalTexts = [
        "0", "1", "-1", "0.3", "-0.001", "12345.6789",
        "123456789012345678901234567890.12345678",
        "-98765432109876543210987654321098765432",
        "99999999999999999999999999999999999999",
        "1e100", "-1.5e-20", "7E-100", "3e127", "0.000000000000000000000000000001",
    ]

    @Test("Large, negative and exponent decimals round-trip exactly", arguments: decimalTexts)
    func decimalRoundTrip(text: String) throws {
        let value = Self.decimal(text)
        let back = try Self.roundTrip(.decimal(value))
        #expect(back == .decimal(value))
        guard case .decimal(let decimal) = back else { return }
        // Same value, same text: no float ever touched it.
        #expect(decimal.description == value.description)
        #expect(!decimal.isNaN)
    }

    @Test("exactDecimal refuses text that is not plainly a number", arguments: ["", "1.2.3", "12abc", "NaN", "nan", "1e", "--1", "-", "+", ".", "e5", "1e+", "1 ", " 1", "0x10", "1,5", "Infinity", "1e5.5", "+-1"])
    func exactDecimalRejects(text: String) {
        #expect(PropertyValue.exactDecimal(text) == nil, "'\(text)' was accepted")
    }

    @Test("exactDecimal accepts plain numbers", arguments: [
        ("1e5", "100000"), ("-0.001", "-0.001"), ("+3", "3"), ("1E+5", "100000"), ("2.5e-3", "0.0025"),
        (".5", "0.5"), ("5.", "5"), ("007", "7"), ("-0", "0"),
    ])
    func exactDecimalAccepts(text: String, expected: String) throws {
        let decimal = try #require(PropertyValue.exactDecimal(text), "'\(text)' was refused")
        #expect(decimal == Self.decimal(expected))
    }

    @Test("exactDecimal refuses what Decimal cannot hold exactly", arguments: [
        "1234567890123456789012345678901234567891", // 40 significant digits
        "123456789012345678901234567890123456789", // 39
        "1.23456789012345678901234567890123456789",
        "1e200", "1e-200", "1e165", "1E-129", "0.01E-127", "12345678901234567890123456789012345678E128",
    ])
    func exactDecimalRejectsInexact(text: String) {
        #expect(PropertyValue.exactDecimal(text) == nil, "'\(text)' was accepted as \(String(describing: PropertyValue.exactDecimal(text)))")
    }

    @Test("The exponent rule is on the value, not its spelling: one value, every spelling alike", arguments: [
        ["1E128", "10E127", "0.1E129", "100000000000000000000000000000000000000E90"],
        ["1E164", "10E163", "0.0001E168"],
        ["1E-128", "0.1E-127", "10E-129", "0.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001"],
        ["12345678901234567890123456789012345678E127", "1.2345678901234567890123456789012345678E164"],
    ])
    func exactDecimalRuleOnTheValue(spellings: [String]) throws {
        let decimals = try spellings.map { text in try #require(PropertyValue.exactDecimal(text), "'\(text)' was refused") }
        for decimal in decimals { #expect(decimal == decimals[0]) }
        // Negative values follow the same rule.
        for text in spellings { #expect(PropertyValue.exactDecimal("-" + text) == -decimals[0]) }
    }

    @Test("Just past the bounds, every spelling is refused", arguments: ["1E165", "10E164", "0.1E166", "1E-129", "0.1E-128", "10E-130", "1E99999999999999999999999"])
    func exactDecimalRefusedPastTheBounds(text: String) {
        #expect(PropertyValue.exactDecimal(text) == nil, "'\(text)' was accepted")
    }

    @Test("38 significant digits, with zeros around them, are exact")
    func exactDecimalThirtyEightDigits() throws {
        let text = "12345678901234567890123456789012345678"
        let decimal = try #require(PropertyValue.exactDecimal(text))
        #expect(decimal.description == text)
        #expect(PropertyValue.exactDecimal("000" + text) == decimal)
        #expect(PropertyValue.exactDecimal("0.000" + text + "000")?.description == "0.000" + text)
    }

    @Test("A Value whose only field is unknown (a newer kind) is refused naming the field, never read as nil")
    func unknownValueKindIsRefused() throws {
        // Field 30, varint 1: a kind this build does not know.
        let wire = try Strata_V1_Value(serializedBytes: [0xF0, 0x01, 0x01] as [UInt8])
        #expect(wire.kind == nil)
        let error = try #require(Self.decodingError(wire), "an unknown kind decoded")
        #expect(error.code == .invalidArgument)
        #expect(error.strataCode == StrataError.Code.invalidValue.rawValue)
        #expect(error.message.contains("Book.field"), "\(error.message)")
        // No field at all is still nil; a known kind beside an unknown field is read.
        #expect(try PropertyValue(wire: Strata_V1_Value(), field: "f") == .null)
        let both = try Strata_V1_Value(serializedBytes: [0x08, 0x04, 0xF0, 0x01, 0x01] as [UInt8])
        #expect(try PropertyValue(wire: both, field: "f") == .integer(2))
    }

    @Test("A malformed decimal on the wire is INVALID_ARGUMENT (140104) naming the field")
    func malformedDecimalOnWire() throws {
        for text in ["12abc", "NaN", "1e", ""] {
            let error = try #require(Self.decodingError(Strata_V1_Value.with { $0.decimal = text }), "'\(text)' decoded")
            #expect(error.code == .invalidArgument)
            #expect(error.strataCode == StrataError.Code.invalidValue.rawValue)
            #expect(error.message.contains("Book.field"), "\(error.message)")
        }
    }

    // MARK: Date

    @Test("Dates keep every bit of their reference-date seconds")
    func dateBits() throws {
        let seconds: [Double] = [
            0, 1.000_000_1, 123_456_789.123_456_789, -978_307_200.000_000_3,
            765_432_100.000_000_000_5, Double.ulpOfOne, -Double.leastNonzeroMagnitude, 1e15 + 0.25,
            Date.distantPast.timeIntervalSinceReferenceDate, Date.distantFuture.timeIntervalSinceReferenceDate,
        ]
        for value in seconds {
            let date = Date(timeIntervalSinceReferenceDate: value)
            #expect(PropertyValue.date(date).wire.date.bitPattern == value.bitPattern)
            guard case .date(let back) = try Self.roundTrip(.date(date)) else {
                Issue.record("\(value) came back as another kind")
                continue
            }
            #expect(back.timeIntervalSinceReferenceDate.bitPattern == value.bitPattern, "\(value)")
            #expect(back == date)
        }
    }

    @Test("Non-finite dates are INVALID_ARGUMENT", arguments: [Double.nan, .infinity, -.infinity, .signalingNaN])
    func nonFiniteDates(seconds: Double) throws {
        let error = try #require(Self.decodingError(Strata_V1_Value.with { $0.date = seconds }))
        #expect(error.code == .invalidArgument)
        #expect(error.strataCode == StrataError.Code.invalidValue.rawValue)
    }

    // MARK: UUID, binary

    @Test("UUIDs travel as their 16 bytes in RFC 4122 order")
    func uuidBytes() throws {
        let uuid = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!
        let wire = PropertyValue.uuid(uuid).wire
        #expect(Array(wire.uuid) == [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        let bytes: [UInt8] = (0..<16).map { UInt8($0 * 17) }
        let decoded = try PropertyValue(wire: Strata_V1_Value.with { $0.uuid = Data(bytes) }, field: "x")
        #expect(decoded == .uuid(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!))
        for _ in 0..<20 {
            let random = UUID()
            #expect(try Self.roundTrip(.uuid(random)) == .uuid(random))
        }
    }

    @Test("A UUID that is not 16 bytes is INVALID_ARGUMENT", arguments: [0, 1, 15, 17, 32])
    func uuidWrongLength(count: Int) throws {
        let error = try #require(Self.decodingError(Strata_V1_Value.with { $0.uuid = Data(repeating: 0xAB, count: count) }))
        #expect(error.code == .invalidArgument)
        #expect(error.strataCode == StrataError.Code.invalidValue.rawValue)
        #expect(error.message.contains("\(count)"), "\(error.message)")
    }

    @Test("3 MiB of binary round-trips byte for byte")
    func largeBinary() throws {
        var generator = SplitMix64(state: 0x5EED)
        var bytes = [UInt8](repeating: 0, count: 3 * 1024 * 1024)
        for index in stride(from: 0, to: bytes.count, by: 8) {
            let word = generator.next()
            for k in 0..<8 { bytes[index + k] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(k))) }
        }
        let data = Data(bytes)
        #expect(try Self.roundTrip(.binary(data)) == .binary(data))
    }

    // MARK: Object IDs

    @Test("Malformed object IDs are INVALID_ARGUMENT", arguments: ["", "book", "strata://", "strata://store/Book/42", "strata://store//p1", "strata://store/Book/pX", "strata-temp://Book/tnot-a-uuid"])
    func malformedObjectIDs(text: String) throws {
        let single = try #require(Self.decodingError(Strata_V1_Value.with { $0.object = text }))
        #expect(single.code == .invalidArgument)
        let list = try #require(Self.decodingError(Strata_V1_Value.with {
            $0.objects = Strata_V1_ObjectIDList.with { $0.ids = ["strata://s/Book/p1", text] }
        }))
        #expect(list.code == .invalidArgument)
    }

    @Test("Object IDs go through the caller's resolver (a save's temporary IDs)")
    func objectIDResolver() throws {
        let mapped = ObjectID(storeIdentifier: Self.storeID, entityName: "Book", key: .permanent(7))
        let value = try PropertyValue(wire: Strata_V1_Value.with { $0.objects = Strata_V1_ObjectIDList.with { $0.ids = ["b1", "b1"] } }, field: "x") { text in
            #expect(text == "b1")
            return mapped
        }
        #expect(value == .objects([mapped, mapped]))
    }

    // MARK: Object state

    @Test("ObjectState values decode by key; absent keys are nil")
    func objectStateValues() throws {
        let state = Strata_V1_ObjectState.with {
            $0.id = "strata://s/Book/p1"
            $0.entity = "Book"
            $0.values["title"] = PropertyValue.string("Dune").wire
            $0.values["price"] = PropertyValue.decimal(Self.decimal("9.99")).wire
        }
        #expect(try state.value("title") == .string("Dune"))
        #expect(try state.value("price") == .decimal(Self.decimal("9.99")))
        #expect(try state.value("author") == .null)
        #expect(try state.propertyValues() == ["title": .string("Dune"), "price": .decimal(Self.decimal("9.99"))])
        #expect(Strata_V1_Value(.integer(5)) == PropertyValue.integer(5).wire)
    }
}

extension Decimal {
    /// The text a decimal travels as.
    fileprivate var wireText: String { PropertyValue.decimal(self).wire.decimal }
}
