/// Property values of one object by name, with a dictionary's meaning (a
/// key is absent or holds a value, `.null` included) and a compact shape:
/// values whose names are in a ``Layout`` shared by every object of an
/// entity sit in an array in the layout's order; any other name goes to a
/// plain dictionary beside it.
///
/// A dictionary of eight values takes about 700 bytes (sixteen buckets of
/// a 16-byte key and a 24-byte value, and its header); the same values
/// here take about 220 — what a fetch of 100,000 rows allocates, and what
/// the row cache holds per row. Reading or writing a value by name costs
/// one lookup of the name in the layout, as in a dictionary; copying costs
/// an array copy, not a rehash.
///
/// Two instances are equal when they hold the same names with the same
/// values, whatever their layouts.
public struct PropertyValues: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// Property names in slot order, shared by the values of one entity.
    public final class Layout: Sendable {
        /// The names, in slot order.
        public let names: [String]
        private let positions: [String: Int]

        /// A layout of these names (duplicates keep their first slot).
        public init(names: [String]) {
            var unique: [String] = []
            var positions: [String: Int] = [:]
            positions.reserveCapacity(names.count)
            for name in names where positions[name] == nil {
                positions[name] = unique.count
                unique.append(name)
            }
            self.names = unique
            self.positions = positions
        }

        /// The slot of a name, nil when the layout does not have it.
        public func slot(of name: String) -> Int? {
            positions[name]
        }

        /// The layout with no names.
        public static let empty = Layout(names: [])
    }

    /// The layout the slots follow.
    public private(set) var layout: Layout
    private var slots: [PropertyValue?]
    private var extras: [String: PropertyValue]

    /// No values.
    public init() {
        layout = .empty
        slots = []
        extras = [:]
    }

    /// The values of a dictionary (kept as it is: no copy).
    public init(_ dictionary: [String: PropertyValue]) {
        layout = .empty
        slots = []
        extras = dictionary
    }

    /// Every name of `layout` absent, or every one holding `value`.
    public init(layout: Layout, repeating value: PropertyValue? = nil) {
        self.layout = layout
        slots = Array(repeating: value, count: layout.names.count)
        extras = [:]
    }

    /// The values of a literal.
    public init(dictionaryLiteral elements: (String, PropertyValue)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    // MARK: By name

    /// The value of a name; nil when absent. Setting nil removes it.
    public subscript(key: String) -> PropertyValue? {
        get {
            if let slot = layout.slot(of: key) { return slots[slot] }
            return extras.isEmpty ? nil : extras[key]
        }
        set {
            if let slot = layout.slot(of: key) {
                slots[slot] = newValue
            } else {
                extras[key] = newValue
            }
        }
    }

    /// The value of a name, or `defaultValue` when absent.
    public subscript(key: String, default defaultValue: @autoclosure () -> PropertyValue) -> PropertyValue {
        self[key] ?? defaultValue()
    }

    /// Sets a value and returns the one it replaced.
    @discardableResult
    public mutating func updateValue(_ value: PropertyValue, forKey key: String) -> PropertyValue? {
        let old = self[key]
        self[key] = value
        return old
    }

    /// Removes a value and returns it.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> PropertyValue? {
        let old = self[key]
        if old != nil { self[key] = nil }
        return old
    }

    /// Whether `other` holds values for exactly the same names (whatever
    /// the values): same layout, same slots present, and neither has names
    /// outside its layout (``keys`` would then give the same names in the
    /// same order). False when unsure.
    public func hasSameKeys(as other: PropertyValues) -> Bool {
        guard layout === other.layout, extras.isEmpty, other.extras.isEmpty, slots.count == other.slots.count else { return false }
        for index in slots.indices where (slots[index] == nil) != (other.slots[index] == nil) { return false }
        return true
    }

    /// Removes every value (the layout stays).
    public mutating func removeAll() {
        for index in slots.indices { slots[index] = nil }
        extras.removeAll()
    }

    // MARK: By slot

    /// The value in a slot of ``layout``; nil when absent.
    public subscript(slot slot: Int) -> PropertyValue? {
        get { slots[slot] }
        set { slots[slot] = newValue }
    }

    /// The value of a name whose slot in `layout` is known: by slot when
    /// these values follow `layout`, else by name. Setting into empty
    /// values of another layout adopts `layout` first, so later writes
    /// take the slot path too.
    public subscript(key: String, slot slot: Int, in layout: Layout) -> PropertyValue? {
        get {
            self.layout === layout ? slots[slot] : self[key]
        }
        set {
            if self.layout !== layout, extras.isEmpty, slots.allSatisfy({ $0 == nil }) {
                self = PropertyValues(layout: layout)
            }
            if self.layout === layout {
                slots[slot] = newValue
            } else {
                self[key] = newValue
            }
        }
    }

    /// The values whose names are not in ``layout`` (usually none).
    public var valuesOutsideLayout: [String: PropertyValue] { extras }

    // MARK: Whole

    /// How many names hold a value.
    public var count: Int {
        var total = extras.count
        for value in slots where value != nil { total += 1 }
        return total
    }

    /// Whether no name holds a value.
    public var isEmpty: Bool {
        extras.isEmpty && !slots.contains { $0 != nil }
    }

    /// The names holding a value: the layout's in slot order, then the others.
    public var keys: [String] {
        var result: [String] = []
        result.reserveCapacity(slots.count + extras.count)
        for (index, value) in slots.enumerated() where value != nil { result.append(layout.names[index]) }
        result.append(contentsOf: extras.keys)
        return result
    }

    /// The values present, in the order of ``keys``.
    public var values: [PropertyValue] {
        var result: [PropertyValue] = []
        result.reserveCapacity(slots.count + extras.count)
        for value in slots { if let value { result.append(value) } }
        result.append(contentsOf: extras.values)
        return result
    }

    /// The values as a dictionary.
    public var dictionary: [String: PropertyValue] {
        if slots.isEmpty { return extras }
        var result = extras
        result.reserveCapacity(slots.count + extras.count)
        for (index, value) in slots.enumerated() {
            if let value { result[layout.names[index]] = value }
        }
        return result
    }

    /// Sets every value of `other`, resolving a name both hold with `combine(mine, theirs)`.
    public mutating func merge(_ other: PropertyValues, uniquingKeysWith combine: (PropertyValue, PropertyValue) throws -> PropertyValue) rethrows {
        for (key, value) in other {
            if let mine = self[key] {
                self[key] = try combine(mine, value)
            } else {
                self[key] = value
            }
        }
    }

    /// These values with every value of `other` set (see ``merge(_:uniquingKeysWith:)``).
    public func merging(_ other: PropertyValues, uniquingKeysWith combine: (PropertyValue, PropertyValue) throws -> PropertyValue) rethrows -> PropertyValues {
        var result = self
        try result.merge(other, uniquingKeysWith: combine)
        return result
    }

    /// The values that pass `isIncluded`.
    public func filter(_ isIncluded: ((key: String, value: PropertyValue)) throws -> Bool) rethrows -> PropertyValues {
        var result = self
        for element in self where try !isIncluded(element) { result[element.key] = nil }
        return result
    }

    /// The same names with transformed values.
    public func mapValues(_ transform: (PropertyValue) throws -> PropertyValue) rethrows -> PropertyValues {
        var result = self
        for index in result.slots.indices {
            if let value = result.slots[index] { result.slots[index] = try transform(value) }
        }
        result.extras = try extras.mapValues(transform)
        return result
    }

    // MARK: Sequence

    /// Iterates the names holding a value: the layout's in slot order, then the others.
    public struct Iterator: IteratorProtocol {
        private let layout: Layout
        private let slots: [PropertyValue?]
        private var slot = 0
        private var extras: Dictionary<String, PropertyValue>.Iterator

        fileprivate init(_ values: PropertyValues) {
            layout = values.layout
            slots = values.slots
            extras = values.extras.makeIterator()
        }

        /// The next name and value.
        public mutating func next() -> (key: String, value: PropertyValue)? {
            while slot < slots.count {
                defer { slot += 1 }
                if let value = slots[slot] { return (layout.names[slot], value) }
            }
            return extras.next()
        }
    }

    /// Iterates the names holding a value.
    public func makeIterator() -> Iterator {
        Iterator(self)
    }

    /// A lower bound of how many values there are.
    public var underestimatedCount: Int { extras.count }

    // MARK: Equality

    /// Whether both hold the same names with the same values (layouts aside).
    public static func == (lhs: PropertyValues, rhs: PropertyValues) -> Bool {
        if lhs.layout === rhs.layout { return lhs.slots == rhs.slots && lhs.extras == rhs.extras }
        guard lhs.count == rhs.count else { return false }
        for (key, value) in lhs where rhs[key] != value { return false }
        return true
    }

    /// Order-independent, like a dictionary's: equal values hash equal
    /// whatever their layouts.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        var count = 0
        for (key, value) in self {
            var element = Hasher()
            element.combine(key)
            element.combine(value)
            combined ^= element.finalize()
            count += 1
        }
        hasher.combine(count)
        hasher.combine(combined)
    }

    /// Like a dictionary's description, names sorted.
    public var description: String {
        guard !isEmpty else { return "[:]" }
        return "[" + self.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "]"
    }
}
