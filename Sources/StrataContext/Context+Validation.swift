import Foundation
import StrataModel

extension Context {
    /// Validates every inserted and updated object; one problem throws its
    /// own code, several throw 1560 listing each.
    func validateChanges() async throws {
        let problems = try await validationProblems(of: graph.changedObjects)
        guard !problems.isEmpty else { return }
        throw validationError(problems)
    }

    /// The error for validation problems: the problem's own code for one,
    /// 1560 listing each for several.
    func validationError(_ problems: [PropertyFailure]) -> StrataError {
        if problems.count == 1 {
            return StrataError(problems[0].code, problems[0].message, failures: problems)
        }
        return StrataError(.multipleValidationErrors, "\(problems.count) validation errors; nothing was saved", details: problems.map(\.description), failures: problems)
    }

    /// The validation problems of `changed` (deleted objects skipped).
    func validationProblems(of changed: [ManagedObject]) async throws -> [PropertyFailure] {
        var problems: [PropertyFailure] = []
        let objects = changed.filter { !$0.isDeleted }
        var plan: ValidationPlan?
        for object in objects {
            // Objects of one entity usually come together: look the plan up
            // once per run of them.
            let current: ValidationPlan
            if let plan, plan.entity == object.entityName {
                current = plan
            } else {
                current = validationPlan(of: object.entityName)
                plan = current
            }
            // To-many counts need the lists.
            for relationship in current.countedLists {
                if object.isInserted || object.toManyChanges[relationship.name] != nil {
                    try await loadList(relationship.name, of: object)
                }
            }
            validate(object, current, into: &problems)
        }
        return problems
    }

    /// The problems of one object.
    func validate(_ object: ManagedObject) -> [PropertyFailure] {
        var problems: [PropertyFailure] = []
        validate(object, validationPlan(of: object.entityName), into: &problems)
        return problems
    }

    /// Appends the problems of one object of `plan`'s entity to `problems`.
    func validate(_ object: ManagedObject, _ plan: ValidationPlan, into problems: inout [PropertyFailure]) {
        let entity = object.entityName
        func problem(_ code: StrataError.Code, _ property: String, _ message: String) -> PropertyFailure {
            PropertyFailure(objectID: object.objectID, entityName: entity, property: property, code: code, message: message)
        }
        let checkAll = object.isInserted
        // Only attributes with something to check: mandatory, bounded,
        // patterned, or transient (checked when set).
        for attribute in plan.checks {
            guard checkAll || object.changes[attribute.name] != nil || attribute.isTransient else { continue }
            let value: PropertyValue
            if attribute.isTransient {
                value = object.transients[attribute.name] ?? (object.isInserted ? attribute.defaultValue : .null)
                // Transient values are checked only when set.
                if value.isNull { continue }
            } else {
                value = graph.currentValue(of: object, forKey: attribute.name) ?? .null
            }
            if value.isNull {
                if !attribute.isOptional && !attribute.isTransient {
                    problems.append(problem(.validationMissingMandatoryProperty, attribute.name, "\(entity).\(attribute.name) of \(object.objectID) is mandatory and nil"))
                }
                continue
            }
            // Most attributes have no bounds: skip building the message.
            guard attribute.hasBounds else { continue }
            problems += Self.boundsProblems(value, plan.attributes[attribute.index], "\(entity).\(attribute.name) of \(object.objectID)").map { problem($0.0, attribute.name, $0.1) }
        }
        for relationship in plan.relationships {
            var name: String { "\(entity).\(relationship.name) of \(object.objectID)" }
            if relationship.isToMany {
                guard let list = graph.currentList(of: object, forKey: relationship.name) else { continue }
                if list.isEmpty && !relationship.isOptional && relationship.minCount == 0 {
                    problems.append(problem(.validationMissingMandatoryProperty, relationship.name, "\(name) is mandatory and empty"))
                } else if relationship.minCount > 0, list.count < relationship.minCount, !(list.isEmpty && relationship.isOptional) {
                    problems.append(problem(.validationRelationshipLacksMinimumCount, relationship.name, "\(name) has \(list.count) object(s), fewer than its minimum \(relationship.minCount)"))
                }
                if relationship.maxCount > 0, list.count > relationship.maxCount {
                    problems.append(problem(.validationRelationshipExceedsMaximumCount, relationship.name, "\(name) has \(list.count) object(s), more than its maximum \(relationship.maxCount)"))
                }
            } else if checkAll || object.changes[relationship.name] != nil {
                if (graph.currentValue(of: object, forKey: relationship.name) ?? .null).isNull && !relationship.isOptional {
                    problems.append(problem(.validationMissingMandatoryProperty, relationship.name, "\(name) is mandatory and nil"))
                }
            }
        }
    }

    /// Whether an object inserted with `values` (persisted ones, defaults
    /// included) and no transient value set passes the attribute checks
    /// of ``validate(_:_:into:)``, which checks every attribute of an
    /// inserted object: mandatory ones set, bounds and patterns met,
    /// transient ones at their defaults when those are not nil. The
    /// direct insert's check (which leaves any refusal to a context, for
    /// its error).
    static func admitsInsert(_ plan: ValidationPlan, values: PropertyValues) -> Bool {
        for check in plan.checks {
            let value: PropertyValue
            if check.isTransient {
                value = check.defaultValue
                if value.isNull { continue }
            } else {
                value = values[check.name] ?? .null
            }
            if value.isNull {
                if !check.isOptional && !check.isTransient { return false }
                continue
            }
            if check.hasBounds, !boundsProblems(value, plan.attributes[check.index], check.name).isEmpty { return false }
        }
        return true
    }

    /// What validation looks at in one entity, computed once per context.
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
            relationships = model.relationships(of: entity).filter { !$0.isTransient }
            countedLists = relationships.filter { $0.isToMany && ($0.minCount > 0 || $0.maxCount > 0) }
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

    /// The validation plan of an entity.
    func validationPlan(of entity: String) -> ValidationPlan {
        if let cached = validationPlanCache[entity] { return cached }
        let model = self.model
        let plan = coordinator.validationPlans.value(for: entity) { ValidationPlan(entity: entity, model: model) }
        validationPlanCache[entity] = plan
        return plan
    }

    /// Range, length and pattern problems of a non-nil value.
    static func boundsProblems(_ value: PropertyValue, _ attribute: AttributeDescription, _ name: String) -> [(StrataError.Code, String)] {
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
                let matches = (try? NSRegularExpression(pattern: "^(?:\(pattern))$")).map {
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
