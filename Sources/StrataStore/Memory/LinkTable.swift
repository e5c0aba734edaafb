/// The links of one join-stored to-many relationship (a many-to-many pair,
/// or a to-many without a usable inverse), stored once for both directions.
///
/// A link is a (source, destination) pair of primary keys. `forward` lists
/// each source's destinations and `reverse` each destination's sources;
/// every mutation updates both, so they always describe the same pairs.
/// A direction that is ordered keeps the order it was given (new links from
/// the other side go last); an unordered one is kept sorted by primary key.
struct LinkTable: Sendable, Hashable {
    /// Whether sources keep their destinations in a chosen order.
    let forwardOrdered: Bool
    /// Whether destinations keep their sources in a chosen order.
    let reverseOrdered: Bool
    /// Destinations by source primary key (no empty lists).
    private(set) var forward: [Int64: [Int64]] = [:]
    /// Sources by destination primary key (no empty lists).
    private(set) var reverse: [Int64: [Int64]] = [:]

    /// An empty table.
    init(forwardOrdered: Bool, reverseOrdered: Bool) {
        self.forwardOrdered = forwardOrdered
        self.reverseOrdered = reverseOrdered
    }

    /// The number of links.
    var linkCount: Int { forward.values.reduce(0) { $0 + $1.count } }

    /// Replaces the destinations of `source` (duplicates keep their first place).
    mutating func setDestinations(of source: Int64, to destinations: [Int64]) {
        Self.replace(source, with: destinations, in: &forward, ordered: forwardOrdered, mirror: &reverse, mirrorOrdered: reverseOrdered)
    }

    /// Replaces the sources of `destination` (duplicates keep their first place).
    mutating func setSources(of destination: Int64, to sources: [Int64]) {
        Self.replace(destination, with: sources, in: &reverse, ordered: reverseOrdered, mirror: &forward, mirrorOrdered: forwardOrdered)
    }

    /// Removes every link of a row, on either side.
    mutating func removeRow(_ primaryKey: Int64) {
        setDestinations(of: primaryKey, to: [])
        setSources(of: primaryKey, to: [])
    }

    /// A table as loaded from a file: `forward` as stored, `reverse` as
    /// stored when the reverse direction is ordered (`nil` rebuilds it,
    /// sorted by key). Nil when a list holds a duplicate, an unordered list
    /// is not sorted, or the two directions do not name the same links.
    init?(forwardOrdered: Bool, reverseOrdered: Bool, forward: [Int64: [Int64]], reverse: [Int64: [Int64]]?) {
        self.forwardOrdered = forwardOrdered
        self.reverseOrdered = reverseOrdered
        var pairs: Set<Pair> = []
        for (source, destinations) in forward {
            guard !destinations.isEmpty, forwardOrdered || Self.isSorted(destinations) else { return nil }
            for destination in destinations {
                guard pairs.insert(Pair(source: source, destination: destination)).inserted else { return nil }
            }
        }
        self.forward = forward
        if let reverse {
            var mirrored: Set<Pair> = []
            for (destination, sources) in reverse {
                guard !sources.isEmpty, reverseOrdered || Self.isSorted(sources) else { return nil }
                for source in sources {
                    guard mirrored.insert(Pair(source: source, destination: destination)).inserted else { return nil }
                }
            }
            guard mirrored == pairs else { return nil }
            self.reverse = reverse
        } else {
            var built: [Int64: [Int64]] = [:]
            for source in forward.keys.sorted() {
                for destination in forward[source] ?? [] { built[destination, default: []].append(source) }
            }
            self.reverse = built
        }
    }

    private struct Pair: Hashable {
        var source: Int64
        var destination: Int64
    }

    private static func isSorted(_ list: [Int64]) -> Bool {
        zip(list, list.dropFirst()).allSatisfy { $0 < $1 }
    }

    private static func normalized(_ list: [Int64], ordered: Bool) -> [Int64] {
        var seen: Set<Int64> = []
        var result: [Int64] = []
        result.reserveCapacity(list.count)
        for key in list where seen.insert(key).inserted { result.append(key) }
        if !ordered { result.sort() }
        return result
    }

    private static func replace(
        _ key: Int64,
        with list: [Int64],
        in primary: inout [Int64: [Int64]],
        ordered: Bool,
        mirror: inout [Int64: [Int64]],
        mirrorOrdered: Bool
    ) {
        let new = normalized(list, ordered: ordered)
        let old = primary[key] ?? []
        let newSet = Set(new)
        let oldSet = Set(old)
        // Lists are changed in place (through the dictionary's subscript),
        // never copied out and written back, which would copy them whole.
        for other in old where !newSet.contains(other) {
            mirror[other]?.removeAll { $0 == key }
            if mirror[other]?.isEmpty == true { mirror[other] = nil }
        }
        for other in new where !oldSet.contains(other) {
            if mirrorOrdered {
                mirror[other, default: []].append(key)
            } else {
                let position = SortedInsertion.index(in: mirror[other] ?? []) { $0 < key }
                mirror[other, default: []].insert(key, at: position)
            }
        }
        primary[key] = new.isEmpty ? nil : new
    }
}
