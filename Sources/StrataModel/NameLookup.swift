/// Values by property name, for the lookups made once per value set or
/// written (setting a value, binding a row): a small table is scanned,
/// comparing lengths, then names (immediate for identical strings), which
/// costs less than hashing the name; a large one is a dictionary.
public struct NameLookup<Value> {
    /// Up to this many names are scanned.
    public static var scanLimit: Int { 24 }

    @usableFromInline let dictionary: [String: Value]
    @usableFromInline let list: [(name: String, length: Int, value: Value)]

    /// The values of `dictionary` by their keys.
    public init(_ dictionary: [String: Value]) {
        self.dictionary = dictionary
        list = dictionary.count <= Self.scanLimit ? dictionary.map { ($0.key, $0.key.utf8.count, $0.value) } : []
    }

    /// The value of a name; nil when there is none.
    @inlinable
    public subscript(name: String) -> Value? {
        guard !list.isEmpty else { return dictionary[name] }
        let length = name.utf8.count
        for entry in list where entry.length == length && entry.name == name { return entry.value }
        // Strings equal by Unicode canonical equivalence can differ in
        // length ("é" composed or not): a name that is not ASCII is looked
        // up as a dictionary would.
        return name.utf8.allSatisfy({ $0 < 0x80 }) ? nil : dictionary[name]
    }
}

extension NameLookup: Sendable where Value: Sendable {}
