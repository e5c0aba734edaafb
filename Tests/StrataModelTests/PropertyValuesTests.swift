import Foundation
import StrataModel
import Testing

/// ``PropertyValues`` behaves as a `[String: PropertyValue]` whatever its
/// layout: the same reads, writes, equality, hashing and iteration.
@Suite("PropertyValues")
struct PropertyValuesTests {
    static let layout = PropertyValues.Layout(names: ["title", "pages", "author", "title"])

    /// The same operations on a dictionary and on values of each shape.
    @Test("Reads, writes and removals match a dictionary's, in every shape", arguments: 0..<3)
    func matchesDictionary(shape: Int) {
        var values: PropertyValues = switch shape {
        case 0: PropertyValues()
        case 1: PropertyValues(layout: Self.layout)
        default: PropertyValues(layout: Self.layout, repeating: .null)
        }
        var expected: [String: PropertyValue] = shape == 2 ? ["title": .null, "pages": .null, "author": .null] : [:]
        var random = SplitMix64(seed: UInt64(shape) + 1)
        let keys = ["title", "pages", "author", "price", "uuid"]
        let choices: [PropertyValue?] = [nil, .null, .integer(7), .string("x"), .decimal(Decimal(string: "0.3")!)]
        for _ in 0..<500 {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            let value = choices[Int(random.next() % UInt64(choices.count))]
            switch random.next() % 3 {
            case 0:
                values[key] = value
                expected[key] = value
            case 1:
                #expect(values.removeValue(forKey: key) == expected.removeValue(forKey: key))
            default:
                if let value {
                    #expect(values.updateValue(value, forKey: key) == expected.updateValue(value, forKey: key))
                }
            }
            #expect(values.count == expected.count)
            #expect(values.isEmpty == expected.isEmpty)
            #expect(values.dictionary == expected)
            #expect(values == PropertyValues(expected))
            #expect(values.hashValue == PropertyValues(expected).hashValue)
            for key in keys {
                #expect(values[key] == expected[key], "\(key)")
                #expect(values[key, default: .boolean(true)] == expected[key, default: .boolean(true)])
            }
            #expect(Set(values.keys) == Set(expected.keys))
            #expect(values.keys.count == expected.count)
            #expect(Dictionary(uniqueKeysWithValues: values.map { ($0.key, $0.value) }) == expected)
        }
    }

    @Test("Same keys: same layout, same slots present, no names outside the layout")
    func sameKeys() {
        let layout = PropertyValues.Layout(names: ["a", "b", "c"])
        var first = PropertyValues(layout: layout)
        first["a"] = .integer(1)
        first["c"] = .null
        var second = PropertyValues(layout: layout)
        second["a"] = .string("x")
        second["c"] = .integer(2)
        #expect(first.hasSameKeys(as: second))
        second["b"] = .integer(3)
        #expect(!first.hasSameKeys(as: second))
        second["b"] = nil
        #expect(first.hasSameKeys(as: second))
        // A name outside the layout, or another layout with the same names: not known to be the same.
        second["z"] = .integer(0)
        #expect(!first.hasSameKeys(as: second))
        var other = PropertyValues(layout: PropertyValues.Layout(names: ["a", "b", "c"]))
        other["a"] = .integer(1)
        other["c"] = .null
        #expect(!first.hasSameKeys(as: other))
        #expect(first.keys == other.keys)
    }

    @Test("The layout's names come first, in slot order; duplicates keep their first slot")
    func order() {
        #expect(Self.layout.names == ["title", "pages", "author"])
        #expect(Self.layout.slot(of: "author") == 2)
        #expect(Self.layout.slot(of: "price") == nil)
        var values = PropertyValues(layout: Self.layout)
        values["price"] = .integer(1)
        values["author"] = .string("A")
        values["title"] = .string("T")
        #expect(values.keys == ["title", "author", "price"])
        #expect(values.values == [.string("T"), .string("A"), .integer(1)])
        #expect(values[slot: 0] == .string("T"))
        #expect(values[slot: 1] == nil)
        values[slot: 1] = .integer(3)
        #expect(values["pages"] == .integer(3))
    }

    @Test("Equal across layouts and with literals; merge, filter, mapValues and removeAll")
    func wholeValues() {
        var compact = PropertyValues(layout: Self.layout)
        compact["title"] = .string("T")
        compact["price"] = .integer(2)
        let literal: PropertyValues = ["price": .integer(2), "title": .string("T")]
        #expect(compact == literal)
        #expect(Set([compact, literal]).count == 1)
        #expect(compact != ["title": .string("T")])
        #expect(compact != ["title": .string("T"), "price": .integer(3)])
        #expect(compact.description == #"["price": 2, "title": "T"]"#)
        #expect(PropertyValues().description == "[:]")

        let merged = compact.merging(["title": .string("U"), "pages": .integer(9)]) { mine, _ in mine }
        #expect(merged == ["title": .string("T"), "price": .integer(2), "pages": .integer(9)])
        #expect(merged.filter { $0.key != "price" } == ["title": .string("T"), "pages": .integer(9)])
        #expect(merged.mapValues { _ in .null } == ["title": .null, "price": .null, "pages": .null])
        var emptied = merged
        emptied.removeAll()
        #expect(emptied.isEmpty && emptied == [:] && emptied.layout === Self.layout)
    }
}
