import Foundation
import StrataModel
import StrataText
import StrataWire
import Synchronization

/// The values of the objects `strata-bench` inserts into any model's
/// entity, from the served model (GetModel): a value of its type for every
/// persisted attribute, within its bounds, unique where a uniqueness
/// constraint names it (a counter or a UUID), unless `--values` supplies
/// it. What cannot be generated (a mandatory relationship, a mandatory
/// string with a pattern, a mandatory attribute of a type without values)
/// is refused when the generator is made, naming the property, unless every
/// `--values` line supplies it.
struct ObjectGenerator: Sendable {
    /// How one attribute's values are made.
    struct Attribute: Sendable {
        var name: String
        var type: String
        var unique: Bool
        var minimum: PropertyValue
        var maximum: PropertyValue
    }

    /// The entity the objects belong to.
    let entity: String
    /// The attributes generated (not transient, not derived, not patterned).
    let attributes: [Attribute]
    /// Values given per object by `--values` (one line per object, in
    /// turn), typed by the model.
    let supplied: [[String: Strata_V1_Value]]
    /// The attribute updates change (the first generated one no uniqueness
    /// constraint names), nil when there is none.
    let updatable: Attribute?
    /// Makes values unique across runs: a random number of this run.
    let nonce: UInt64

    /// Reads the entity's description in `model` and the `--values` lines
    /// (JSON objects of property name to value); throws a usage error
    /// naming what cannot be generated.
    init(model: Strata_V1_GetModelResponse, entity name: String, valueLines: [String], nonce: UInt64 = UInt64.random(in: 1...UInt64(1) << 40)) throws {
        guard let entity = model.entities.first(where: { $0.name == name }) else {
            throw BenchError.usage("--entity: the model '\(model.name)' has no entity '\(name)' (entities: \(model.entities.map(\.name).sorted().joined(separator: ", ")))")
        }
        guard !entity.isAbstract else {
            throw BenchError.usage("--entity: \(name) is abstract: name one of its subentities (\(model.entities.filter { $0.parent == name }.map(\.name).sorted().joined(separator: ", ")))")
        }
        self.entity = name
        self.nonce = nonce
        let supplied = try Self.parse(valueLines, entity: entity, model: model)
        self.supplied = supplied
        // A property every line gives need not be generated.
        let given = supplied.isEmpty ? Set<String>() : supplied.dropFirst().reduce(Set(supplied[0].keys)) { $0.intersection($1.keys) }
        let unique = Set(entity.uniquenessConstraints.flatMap(\.names))
        var attributes: [Attribute] = []
        var refusals: [String] = []
        for attribute in entity.attributes where !attribute.transient && attribute.derivation.isEmpty && !given.contains(attribute.name) {
            let generatable = Self.generatableTypes.contains(attribute.type)
            if !attribute.regularExpression.isEmpty || !generatable {
                if !attribute.optional {
                    let why = generatable ? "its values must match /\(attribute.regularExpression)/" : "no values of type \(attribute.type) can be made up"
                    refusals.append("\(name).\(attribute.name): \(why); give it in --values")
                }
                continue
            }
            attributes.append(Attribute(
                name: attribute.name, type: attribute.type, unique: unique.contains(attribute.name),
                minimum: attribute.hasMinValue ? (try? PropertyValue(wire: attribute.minValue, field: attribute.name)) ?? .null : .null,
                maximum: attribute.hasMaxValue ? (try? PropertyValue(wire: attribute.maxValue, field: attribute.name)) ?? .null : .null
            ))
        }
        for relationship in entity.relationships where !relationship.transient && !given.contains(relationship.name) {
            let mandatory = relationship.toMany ? relationship.minCount > 0 : !relationship.optional
            if mandatory {
                refusals.append("\(name).\(relationship.name): a mandatory relationship to \(relationship.destination) cannot be made up; give object IDs for it in --values")
            }
        }
        guard refusals.isEmpty else {
            throw BenchError.usage("cannot generate \(name) objects:\n  " + refusals.joined(separator: "\n  "))
        }
        self.attributes = attributes
        self.updatable = attributes.first { !$0.unique }
    }

    /// The Core Data types whose values can be made up.
    static let generatableTypes: Set<String> = [
        "Integer 16", "Integer 32", "Integer 64", "Decimal", "Double", "Float", "String", "Boolean", "Date",
        "Binary", "UUID", "URI", "Transformable",
    ]

    /// Numbers the objects this run makes (seeding, warmup and the
    /// measured load draw from one count), so that values made unique from
    /// the number never repeat within a run.
    let counter = ObjectCounter()

    /// The values of the next object.
    func values(random: inout SplitMix64) -> [String: Strata_V1_Value] {
        let number = counter.next()
        var values: [String: Strata_V1_Value] = [:]
        for attribute in attributes {
            values[attribute.name] = value(attribute, number: number, random: &random).wire
        }
        if !supplied.isEmpty {
            for (name, value) in supplied[number % supplied.count] { values[name] = value }
        }
        return values
    }

    /// A value for `attribute` of object `number`: within its bounds and,
    /// when a uniqueness constraint names it, distinct for every number of
    /// the run (the run's nonce plus the number, stepped through the
    /// attribute's range, which repeats only once the range is exhausted).
    func value(_ attribute: Attribute, number: Int, random: inout SplitMix64) -> PropertyValue {
        let counter = nonce &+ UInt64(number)
        /// The range of an integer attribute: its bounds, a default
        /// width below a lone maximum or above a lone minimum.
        func bounds(_ low: Int64, _ high: Int64, width: Int64) -> (Int64, Int64) {
            let minimum = attribute.minimum.integerValue, maximum = attribute.maximum.integerValue
            let lower = minimum ?? maximum.map { $0 < low ? max(Int64.min / 2, $0 &- width) : low } ?? low
            let upper = maximum ?? (attribute.unique ? high : max(lower, min(high, lower &+ width)))
            return (lower, max(lower, upper))
        }
        func draw(_ lower: Int64, _ upper: Int64) -> Int64 {
            let span = UInt64(bitPattern: upper &- lower) &+ 1
            let roll = attribute.unique ? counter : random.next()
            return span == 0 ? lower &+ Int64(bitPattern: roll) : lower &+ Int64(bitPattern: roll % span)
        }
        switch attribute.type {
        case "Integer 16":
            let (lower, upper) = bounds(0, Int64(Int16.max), width: 1000)
            return .integer(min(max(draw(lower, upper), Int64(Int16.min)), Int64(Int16.max)))
        case "Integer 32":
            let (lower, upper) = bounds(0, Int64(Int32.max), width: 1_000_000)
            return .integer(min(max(draw(lower, upper), Int64(Int32.min)), Int64(Int32.max)))
        case "Integer 64":
            let (lower, upper) = bounds(0, attribute.unique ? Int64.max : 1_000_000, width: 1_000_000)
            return .integer(draw(lower, upper))
        case "Decimal", "Double", "Float":
            let minimum = attribute.minimum.numericValue, maximum = attribute.maximum.numericValue
            let lower = minimum ?? maximum.map { $0 < 0 ? $0 - 10_000 : 0 } ?? 0
            let upper = max(lower, maximum ?? lower + 10_000)
            if attribute.unique {
                // Distinct steps through the range: cents for decimals,
                // 2^20 steps for binary floating point.
                let steps: Double = attribute.type == "Decimal" ? max(1, ((upper - lower) * 100).rounded(.down) + 1) : 1_048_576
                let step = Double(counter % UInt64(min(steps, 9e15)))
                if attribute.type == "Decimal" {
                    return .decimal(Decimal(string: String(format: "%.2f", lower)).map { $0 + Decimal(step) / 100 } ?? Decimal(lower))
                }
                return .double(lower + (upper - lower) * step / steps)
            }
            let number = lower + (upper - lower) * Double(random.next() % 1_000_000) / 1_000_000
            if attribute.type == "Decimal" {
                return .decimal(Decimal(string: String(format: "%.2f", min(upper, max(lower, (number * 100).rounded(.down) / 100)))) ?? Decimal(lower))
            }
            return .double(number)
        case "String":
            let least = Int(attribute.minimum.integerValue ?? 0)
            let most = Int(attribute.maximum.integerValue ?? 64)
            // Unique: the number in base 36, whose last digits differ
            // first, so a cut keeps them.
            var text = attribute.unique ? String(counter, radix: 36) : "bench \(number) \(String(random.next() % 1_000_000, radix: 36))"
            if text.count < least { text = String(repeating: "x", count: least - text.count) + text }
            if most > 0, text.count > most { text = String(text.suffix(most)) }
            return .string(text)
        case "Boolean":
            return .boolean(random.next() % 2 == 0)
        case "Date":
            let minimum = attribute.minimum.dateValue, maximum = attribute.maximum.dateValue
            let lower = minimum ?? maximum.map { $0.addingTimeInterval(-200_000_000) } ?? Date(timeIntervalSince1970: 1_600_000_000)
            let upper = maximum ?? max(lower, lower.addingTimeInterval(200_000_000))
            let span = max(0, upper.timeIntervalSince(lower).rounded(.down))
            // Unique: whole seconds, stepped; others anywhere in the range.
            let offset = attribute.unique ? Double(counter % UInt64(span + 1)) : (span * Double(random.next() % 1_000_000) / 1_000_000).rounded(.down)
            return .date(Date(timeIntervalSince1970: (lower.timeIntervalSince1970.rounded(.up) + offset)))
        case "Binary", "Transformable":
            let least = Int(attribute.minimum.integerValue ?? 0)
            let most = Int(attribute.maximum.integerValue ?? 32)
            let length = max(least, min(most, 16))
            // Unique: the number's low bytes first, within the length.
            var bytes: [UInt8] = attribute.unique ? withUnsafeBytes(of: counter.littleEndian, Array.init) : []
            while bytes.count < length { bytes.append(UInt8(truncatingIfNeeded: random.next())) }
            return .binary(Data(bytes.prefix(length)))
        case "UUID":
            return .uuid(UUID())
        case "URI":
            return .uri("https://example.com/strata-bench/\(String(counter, radix: 36))")
        default:
            return .null
        }
    }

    /// Parses `--values` lines against the entity: each a JSON object whose
    /// members are attributes (JSON scalars, typed by the model, within its
    /// bounds) or relationships (an object ID of the destination entity, or
    /// an array of them), so that what the server would refuse is refused
    /// at start, naming the line and the property.
    static func parse(_ lines: [String], entity: Strata_V1_EntityInfo, model: Strata_V1_GetModelResponse) throws -> [[String: Strata_V1_Value]] {
        var objects: [[String: Strata_V1_Value]] = []
        for (index, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let place = "--values line \(index + 1)"
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed])) as? [String: Any] else {
                throw BenchError.usage("\(place): not a JSON object")
            }
            var values: [String: Strata_V1_Value] = [:]
            for (name, json) in object {
                if let attribute = entity.attributes.first(where: { $0.name == name }) {
                    let text: String
                    switch json {
                    case is NSNull: values[name] = Strata_V1_Value(); continue
                    case let string as String: text = string
                    case let number as NSNumber: text = attribute.type == "Boolean" ? (number.boolValue ? "true" : "false") : number.stringValue
                    default: throw BenchError.usage("\(place): \(name): expected a JSON string, number, boolean or null")
                    }
                    let value: PropertyValue
                    do {
                        value = try ValueText.attributeValue(text, type: attribute.type, field: "\(place): \(name)")
                    } catch {
                        throw BenchError.usage(error.message)
                    }
                    if let problem = boundsProblem(value, attribute) { throw BenchError.usage("\(place): \(name): \(problem)") }
                    values[name] = value.wire
                } else if let relationship = entity.relationships.first(where: { $0.name == name }) {
                    let ids: [String]
                    if relationship.toMany {
                        guard let list = json as? [String] else { throw BenchError.usage("\(place): \(name): expected an array of object IDs") }
                        ids = list
                    } else {
                        guard let id = json as? String else { throw BenchError.usage("\(place): \(name): expected an object ID") }
                        ids = [id]
                    }
                    for id in ids {
                        // strata://STORE/Entity/pN, of the destination or a subentity.
                        let parts = id.split(separator: "/", omittingEmptySubsequences: false)
                        guard id.hasPrefix("strata://"), parts.count == 5, parts[4].hasPrefix("p"), Int64(parts[4].dropFirst()) != nil else {
                            throw BenchError.usage("\(place): \(name): '\(id)' is not an object ID (strata://STORE/\(relationship.destination)/pN, as strata fetch prints it)")
                        }
                        guard isKind(String(parts[3]), of: relationship.destination, in: model) else {
                            throw BenchError.usage("\(place): \(name): '\(id)' is an object of \(parts[3]), not of \(relationship.destination)")
                        }
                    }
                    values[name] = relationship.toMany
                        ? Strata_V1_Value.with { $0.objects = Strata_V1_ObjectIDList.with { $0.ids = ids } }
                        : Strata_V1_Value.with { $0.object = ids[0] }
                } else {
                    throw BenchError.usage("\(place): \(entity.name) has no property '\(name)'")
                }
            }
            objects.append(values)
        }
        return objects
    }
}

/// A count shared by every copy of a generator and every connection.
final class ObjectCounter: Sendable {
    private let value = Atomic<Int>(0)

    /// The next number (0, 1, …).
    func next() -> Int { value.add(1, ordering: .relaxed).oldValue }
}

extension ObjectGenerator {
    /// Why `value` is outside the attribute's bounds (numbers and dates:
    /// values; strings and binary data: lengths), or nil.
    static func boundsProblem(_ value: PropertyValue, _ attribute: Strata_V1_AttributeInfo) -> String? {
        let minimum = attribute.hasMinValue ? (try? PropertyValue(wire: attribute.minValue, field: attribute.name)) : nil
        let maximum = attribute.hasMaxValue ? (try? PropertyValue(wire: attribute.maxValue, field: attribute.name)) : nil
        guard minimum != nil || maximum != nil else { return nil }
        func range() -> String { "\(minimum.map { "\($0)" } ?? "…")…\(maximum.map { "\($0)" } ?? "…")" }
        switch value {
        case .string(let text):
            let length = Int64(text.count)
            if let least = minimum?.integerValue, length < least { return "\(length) characters, fewer than the model's minimum of \(least)" }
            if let most = maximum?.integerValue, length > most { return "\(length) characters, more than the model's maximum of \(most)" }
        case .binary(let data):
            let length = Int64(data.count)
            if let least = minimum?.integerValue, length < least { return "\(length) bytes, fewer than the model's minimum of \(least)" }
            if let most = maximum?.integerValue, length > most { return "\(length) bytes, more than the model's maximum of \(most)" }
        case .date(let date):
            if let least = minimum?.dateValue, date < least { return "\(date) is before the model's minimum (\(range()))" }
            if let most = maximum?.dateValue, date > most { return "\(date) is after the model's maximum (\(range()))" }
        default:
            if let number = value.numericValue {
                if let least = minimum?.numericValue, number < least { return "\(value) is below the model's minimum (\(range()))" }
                if let most = maximum?.numericValue, number > most { return "\(value) is above the model's maximum (\(range()))" }
            }
        }
        return nil
    }

    /// Whether `entity` is `ancestor` or one of its subentities in `model`.
    static func isKind(_ entity: String, of ancestor: String, in model: Strata_V1_GetModelResponse) -> Bool {
        var current: String? = entity
        var seen: Set<String> = []
        while let name = current, seen.insert(name).inserted {
            if name == ancestor { return true }
            let parent = model.entities.first { $0.name == name }?.parent ?? ""
            current = parent.isEmpty ? nil : parent
        }
        return false
    }
}

extension PropertyValue {
    /// The integer, when this is one.
    fileprivate var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The number as a Double, when this is one.
    fileprivate var numericValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        case .decimal(let value): NSDecimalNumber(decimal: value).doubleValue
        default: nil
        }
    }

    /// The date, when this is one.
    fileprivate var dateValue: Date? {
        if case .date(let value) = self { return value }
        return nil
    }
}
