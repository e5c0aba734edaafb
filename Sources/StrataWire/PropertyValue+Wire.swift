import Foundation
import StrataModel

extension PropertyValue {
    /// The value as it travels: typed, exact (Decimal as text, Date as the
    /// stored reference-date seconds, UUID as 16 bytes); nil has no kind.
    public var wire: Strata_V1_Value {
        var value = Strata_V1_Value()
        switch self {
        case .null: break
        case .integer(let v): value.integer = v
        case .double(let v): value.double = v
        case .decimal(let v): value.decimal = v.wireText
        case .string(let v): value.string = v
        case .boolean(let v): value.boolean = v
        case .date(let v): value.date = v.timeIntervalSinceReferenceDate
        case .binary(let v): value.binary = v
        case .uuid(let v): value.uuid = withUnsafeBytes(of: v.uuid) { Data($0) }
        case .uri(let v): value.uri = v
        case .object(let id): value.object = id.uriRepresentation
        case .objects(let ids): value.objects = Strata_V1_ObjectIDList.with { $0.ids = ids.map(\.uriRepresentation) }
        }
        return value
    }

    /// Reads a wire value. Object IDs go through `objectID` (which may map a
    /// save's temporary IDs); `field` names the value in errors.
    public init(wire value: Strata_V1_Value, field: @autoclosure () -> String, objectID: (String) throws -> ObjectID = PropertyValue.parseObjectID) throws {
        switch value.kind {
        case nil:
            // No kind means nil; a kind this server does not know (an
            // unknown field, from a newer client) must not be read as nil,
            // which would erase the property.
            guard value.unknownFields.data.isEmpty else {
                throw WireError(.invalidArgument, "\(field()): the value is of a kind this side does not know (protocol \(WireProtocol.version.major).\(WireProtocol.version.minor)); send one of the kinds of PROTOCOL.md §6.2", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            self = .null
        case .integer(let v): self = .integer(v)
        case .double(let v): self = .double(v)
        case .decimal(let text):
            guard let decimal = Self.exactDecimal(text) else {
                throw WireError(.invalidArgument, "\(field()): '\(text)' is not an exact decimal (optional sign, digits, optional '.' and digits, optional exponent; at most 38 significant digits, exponent within -128...127)", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            self = .decimal(decimal)
        case .string(let v): self = .string(v)
        case .boolean(let v): self = .boolean(v)
        case .date(let seconds):
            guard seconds.isFinite else {
                throw WireError(.invalidArgument, "\(field()): a date must be a finite number of seconds", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            self = .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .binary(let v): self = .binary(v)
        case .uuid(let bytes):
            guard bytes.count == 16 else {
                throw WireError(.invalidArgument, "\(field()): a UUID is 16 bytes, got \(bytes.count)", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            // Copied straight into the UUID's tuple: no array in between.
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { target in bytes.withUnsafeBytes { target.copyMemory(from: $0) } }
            self = .uuid(UUID(uuid: uuid))
        case .uri(let v): self = .uri(v)
        case .object(let text): self = .object(try Self.named(field) { try objectID(text) })
        case .objects(let list): self = .objects(try Self.named(field) { try list.ids.map(objectID) })
        }
    }

    /// Runs `body`, naming `field` in the wire errors it throws.
    private static func named<T>(_ field: () -> String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as WireError {
            throw WireError(error.code, "\(field()): \(error.message)", strataCode: error.strataCode)
        }
    }

    /// Parses a permanent or temporary object ID, or throws INVALID_ARGUMENT.
    public static func parseObjectID(_ text: String) throws -> ObjectID {
        guard let id = ObjectID(uriRepresentation: text) else {
            throw WireError(.invalidArgument, "'\(text)' is not an object ID (strata://<store>/<Entity>/p<key>)", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        return id
    }

    /// A decimal from its exact text form, refusing anything that is not
    /// plainly a number (Foundation's parser accepts trailing garbage) or
    /// that Foundation's `Decimal` cannot hold exactly. The rule is on the
    /// value, not its spelling: written as `S × 10^E` with `S` an integer
    /// of `d` digits without trailing zeros, a value is accepted when
    /// `d ≤ 38`, `E ≥ -128` and `E + d ≤ 165` (so `1E128`, `10E127` and
    /// `0.1E129` are one accepted value; `1E165` and `1E-129` are refused).
    public static func exactDecimal(_ text: String) -> Decimal? {
        let bytes = Array(text.utf8)
        var index = 0
        func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") }
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        var digits: [UInt8] = []
        var fractionDigits = 0
        while isDigit(index) { digits.append(bytes[index]); index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while isDigit(index) { digits.append(bytes[index]); fractionDigits += 1; index += 1 }
        }
        guard !digits.isEmpty else { return nil }
        var exponent = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var exponentNegative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            guard isDigit(index) else { return nil }
            while isDigit(index) {
                // Clamped: any exponent this large is refused below anyway.
                exponent = min(exponent * 10 + Int(bytes[index] - UInt8(ascii: "0")), 1_000_000)
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        guard index == bytes.count else { return nil }
        // S: the digits from the first to the last non-zero one.
        guard let first = digits.firstIndex(where: { $0 != UInt8(ascii: "0") }) else { return Decimal(0) }
        let last = digits.lastIndex(where: { $0 != UInt8(ascii: "0") }) ?? first
        let significand = digits[first...last]
        let d = significand.count
        // The power of ten of S's last digit.
        let e = exponent - fractionDigits + (digits.count - 1 - last)
        guard d <= 38, e >= -128, e + d <= 165 else { return nil }
        // Foundation's exponent is at most 127: a larger one moves into
        // the significand as zeros (at most 38 digits in all, checked above).
        let padding = max(0, e - 127)
        let normalized = (negative ? "-" : "") + String(decoding: significand, as: UTF8.self)
            + String(repeating: "0", count: padding) + "E\(e - padding)"
        guard let decimal = Decimal(string: normalized, locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN else { return nil }
        return decimal
    }
}
