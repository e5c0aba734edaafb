/// A property as storage sees it: the entity that declares it and its name.
///
/// Subentities inherit the slot of their ancestor, so one slot stands for
/// the property in a whole sub-hierarchy (as one SQLite column does).
struct StorageSlot: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The entity declaring the property.
    var entity: String
    /// The property's name.
    var name: String

    /// `Entity.name`.
    var description: String { "\(entity).\(name)" }

    /// Orders slots by entity, then name, both by UTF-8 bytes.
    static func < (a: StorageSlot, b: StorageSlot) -> Bool {
        if a.entity != b.entity { return a.entity.utf8.lexicographicallyPrecedes(b.entity.utf8) }
        return a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
    }
}
