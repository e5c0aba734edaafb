import Foundation
import StrataModel

/// What validation looks at in one entity, computed once per entity
/// (``EntityPlan/validation``) and used by every save route.
final class ValidationPlan: Sendable {
    let entity: String
    /// The attributes with something to check: mandatory, bounded,
    /// patterned, or transient (checked when set).
    let attributes: [AttributeDescription]
    /// What the per-object loop reads of each of ``attributes`` (same
    /// order), so that it does not copy whole descriptions.
    let checks: [Check]
    /// The persisted relationships.
    let relationships: [RelationshipDescription]
    /// The persisted to-manys with a minimum or maximum count (their
    /// lists are loaded before validating).
    let countedLists: [RelationshipDescription]
    /// Each of ``attributes``' pattern, compiled once (whole string:
    /// `^(?:pattern)$`); nil without one, or for one that does not compile
    /// (which no value matches).
    let patterns: [NSRegularExpression?]

    init(entity: String, model: ObjectModel) {
        self.entity = entity
        attributes = model.attributes(of: entity).filter {
            !$0.isOptional || $0.isTransient || !$0.minValue.isNull || !$0.maxValue.isNull || $0.regularExpression != nil
        }
        checks = attributes.enumerated().map { index, attribute in
            Check(
                name: attribute.name,
                isOptional: attribute.isOptional,
                isTransient: attribute.isTransient,
                defaultValue: attribute.defaultValue,
                hasBounds: !attribute.minValue.isNull || !attribute.maxValue.isNull || attribute.regularExpression != nil,
                index: index
            )
        }
        patterns = attributes.map { attribute in
            guard let pattern = attribute.regularExpression, !pattern.isEmpty else { return nil }
            return try? NSRegularExpression(pattern: "^(?:\(pattern))$")
        }
        relationships = model.relationships(of: entity).filter { !$0.isTransient }
        countedLists = relationships.filter { $0.isToMany && ($0.minCount > 0 || $0.maxCount > 0) }
    }

    /// Appends the problem, if any, of one checked attribute's current
    /// `value` on the object `objectID`: a mandatory attribute that is nil
    /// (1570), or a value out of its bounds or pattern (1610–1680).
    func check(_ check: Check, value: PropertyValue, objectID: ObjectID, into problems: inout [PropertyFailure]) {
        func problem(_ code: StrataError.Code, _ message: String) -> PropertyFailure {
            PropertyFailure(objectID: objectID, entityName: entity, property: check.name, code: code, message: message)
        }
        if value.isNull {
            if !check.isOptional && !check.isTransient {
                problems.append(problem(.validationMissingMandatoryProperty, "\(entity).\(check.name) of \(objectID) is mandatory and nil"))
            }
            return
        }
        // Most attributes have no bounds: skip building the message.
        guard check.hasBounds else { return }
        problems += Self.boundsProblems(value, attributes[check.index], pattern: patterns[check.index], "\(entity).\(check.name) of \(objectID)").map { problem($0.0, $0.1) }
    }

    /// The attribute problems of a new object with `values` (persisted
    /// ones, defaults and derived values included) and no transient value
    /// set, as a context's validation finds them for an inserted object
    /// (transient attributes at their defaults). Relationships are not
    /// looked at: only for entities whose relationships are all optional
    /// with no minimum count, which an object with none set passes.
    func insertProblems(_ values: PropertyValues, objectID: ObjectID, into problems: inout [PropertyFailure]) {
        for check in checks {
            if check.isTransient {
                if !check.defaultValue.isNull { self.check(check, value: check.defaultValue, objectID: objectID, into: &problems) }
            } else {
                self.check(check, value: values[check.name] ?? .null, objectID: objectID, into: &problems)
            }
        }
    }

    /// One attribute as validation reads it.
    struct Check: Sendable {
        let name: String
        let isOptional: Bool
        let isTransient: Bool
        let defaultValue: PropertyValue
        /// A minimum, a maximum or a pattern.
        let hasBounds: Bool
        /// The index in ``ValidationPlan/attributes``.
        let index: Int
    }

    /// Range, length and pattern problems of a non-nil value; `pattern` is
    /// the attribute's compiled pattern (``patterns``).
    static func boundsProblems(_ value: PropertyValue, _ attribute: AttributeDescription, pattern expression: NSRegularExpression?,
                               _ name: String) -> [(StrataError.Code, String)] {
        var problems: [(StrataError.Code, String)] = []
        switch value {
        case .integer, .double, .decimal:
            if let number = decimal(value) {
                if let max = decimal(attribute.maxValue), number > max {
                    problems.append((.validationNumberTooLarge, "\(name) is \(value), larger than its maximum \(attribute.maxValue)"))
                }
                if let min = decimal(attribute.minValue), number < min {
                    problems.append((.validationNumberTooSmall, "\(name) is \(value), smaller than its minimum \(attribute.minValue)"))
                }
            }
        case .date(let date):
            if case .date(let max) = attribute.maxValue, date > max {
                problems.append((.validationDateTooLate, "\(name) is \(value), later than its maximum \(attribute.maxValue)"))
            }
            if case .date(let min) = attribute.minValue, date < min {
                problems.append((.validationDateTooSoon, "\(name) is \(value), earlier than its minimum \(attribute.minValue)"))
            }
        case .string(let text):
            let length = text.count
            if case .integer(let max) = attribute.maxValue, length > max {
                problems.append((.validationStringTooLong, "\(name) is \(length) characters long, more than its maximum \(max)"))
            }
            if case .integer(let min) = attribute.minValue, length < min {
                problems.append((.validationStringTooShort, "\(name) is \(length) characters long, fewer than its minimum \(min)"))
            }
            if let pattern = attribute.regularExpression, !pattern.isEmpty {
                let matches = expression.map {
                    $0.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                } ?? false
                if !matches {
                    problems.append((.validationStringPatternMatching, "\(name) does not match the pattern \(pattern)"))
                }
            }
        default:
            break
        }
        return problems
    }

    private static func decimal(_ value: PropertyValue) -> Decimal? {
        switch value {
        case .integer(let i): Decimal(i)
        case .double(let d): d.isFinite ? Decimal(d) : nil
        case .decimal(let d): d
        case .boolean(let b): b ? 1 : 0
        default: nil
        }
    }
}
