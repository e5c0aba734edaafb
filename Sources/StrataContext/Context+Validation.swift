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

    /// The error for validation problems (``StrataError/validation(_:)``).
    func validationError(_ problems: [PropertyFailure]) -> StrataError {
        StrataError.validation(problems)
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
            plan.check(attribute, value: value, objectID: object.objectID, into: &problems)
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

    /// The validation plan of an entity.
    func validationPlan(of entity: String) -> ValidationPlan {
        if let plan = entityPlan(of: entity) { return plan.validation }
        // Unreachable: objects are only ever of the model's entities.
        return ValidationPlan(entity: entity, model: model)
    }
}
