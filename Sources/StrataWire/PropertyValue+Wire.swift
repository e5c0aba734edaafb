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
        case .decimal(let v): value.decimal = v.description
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
    public init(wire value: Strata_V1_Value, field: String, objectID: (String) throws -> ObjectID = PropertyValue.parseObjectID) throws {
        switch value.kind {
        case nil: self = .null
        case .integer(let v): self = .integer(v)
        case .double(let v): self = .double(v)
        case .decimal(let text):
            guard let decimal = Self.exactDecimal(text) else {
                throw WireError(.invalidArgument, "\(field): '\(text)' is not a decimal number (digits, optional '.', optional exponent)", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            self = .decimal(decimal)
        case .string(let v): self = .string(v)
        case .boolean(let v): self = .boolean(v)
        case .date(let seconds):
            guard seconds.isFinite else {
                throw WireError(.invalidArgument, "\(field): a date must be a finite number of seconds", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            self = .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .binary(let v): self = .binary(v)
        case .uuid(let bytes):
            guard bytes.count == 16 else {
                throw WireError(.invalidArgument, "\(field): a UUID is 16 bytes, got \(bytes.count)", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            let b = [UInt8](bytes)
            self = .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .uri(let v): self = .uri(v)
        case .object(let text): self = .object(try objectID(text))
        case .objects(let list): self = .objects(try list.ids.map(objectID))
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
    /// plainly a number (Foundation's parser accepts trailing garbage).
    public static func exactDecimal(_ text: String) -> Decimal? {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        func digits() -> Int {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        let whole = digits()
        var fraction = 0
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            fraction = digits()
        }
        guard whole + fraction > 0 else { return nil }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return nil }
        }
        guard bytes.isEmpty else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }
}
