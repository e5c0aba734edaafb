/// The type of an attribute, spelled as Xcode writes it in `attributeType`.
public enum AttributeType: String, Sendable, Hashable, CaseIterable, Codable {
    /// 16-bit signed integer.
    case integer16 = "Integer 16"
    /// 32-bit signed integer.
    case integer32 = "Integer 32"
    /// 64-bit signed integer.
    case integer64 = "Integer 64"
    /// Exact base-10 decimal number.
    case decimal = "Decimal"
    /// 64-bit binary floating point.
    case double = "Double"
    /// 32-bit binary floating point.
    case float = "Float"
    /// Unicode text.
    case string = "String"
    /// True or false.
    case boolean = "Boolean"
    /// A point in time.
    case date = "Date"
    /// Raw bytes.
    case binary = "Binary"
    /// A UUID.
    case uuid = "UUID"
    /// A URI, kept as its text.
    case uri = "URI"
    /// A value turned into bytes by a named value transformer.
    case transformable = "Transformable"
    /// Xcode's type for transient attributes with no declared type.
    case undefined = "Undefined"
    /// An object ID held as an attribute.
    case objectID = "ObjectID"
    /// A composite attribute.
    case composite = "Composite"

    /// The name Xcode writes in `attributeType`.
    public var xcodeName: String { rawValue }

    /// Whether the type is an integer of any width.
    public var isInteger: Bool {
        switch self {
        case .integer16, .integer32, .integer64: true
        default: false
        }
    }

    /// Whether values of the type are numbers (integers, decimals, floating
    /// point; booleans count as numbers as in Core Data).
    public var isNumeric: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .boolean: true
        default: false
        }
    }

    /// The inclusive range an integer type can hold, or `nil` for other types.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        default: nil
        }
    }
}
