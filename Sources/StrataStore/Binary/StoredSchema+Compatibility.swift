import StrataModel

extension StoredSchema {
    /// How a model's schema (`current`) differs from the one a store file
    /// was written with.
    struct Comparison: Sendable {
        /// Entities whose changes cannot be migrated in place, with why.
        var incompatible: [(entity: String, reasons: [String])] = []
        /// Entities that changed in ways a lightweight migration handles.
        var migratable: [(entity: String, changes: [String])] = []
        /// Values to give existing rows for attributes added with a
        /// default: entity → attribute → value.
        var addedDefaults: [String: [String: PropertyValue]] = [:]

        /// Whether the schemas are the same.
        var isIdentical: Bool { incompatible.isEmpty && migratable.isEmpty }
    }

    /// Compares `current` (the model's) with `self` (the file's).
    ///
    /// Lightweight (migratable): an added entity; an added attribute that is
    /// optional or has a default (existing objects read nil or the
    /// default); a removed attribute or relationship; an added optional
    /// to-one or a to-many without a minimum; an attribute or relationship
    /// that became optional. Anything else (a removed entity, a changed
    /// type, parent, abstract flag, destination, inverse, cardinality or
    /// order, a property that became mandatory, a changed version hash
    /// modifier) is incompatible.
    func compare(to current: StoredSchema, model: ObjectModel) -> Comparison {
        var result = Comparison()
        for stored in entities where current.entity(named: stored.name) == nil {
            result.incompatible.append((stored.name, ["the entity is not in the model (removed or renamed)"]))
        }
        for entity in current.entities {
            guard let stored = self.entity(named: entity.name) else {
                result.migratable.append((entity.name, ["entity added"]))
                continue
            }
            guard stored.versionHash != entity.versionHash else { continue }
            var reasons: [String] = []
            var changes: [String] = []
            if stored.parent != entity.parent {
                reasons.append("parent entity changed from \(stored.parent ?? "none") to \(entity.parent ?? "none")")
            }
            if stored.isAbstract != entity.isAbstract {
                reasons.append(entity.isAbstract ? "became abstract" : "is no longer abstract")
            }
            if stored.versionHashModifier != entity.versionHashModifier {
                reasons.append("version hash modifier changed")
            }
            compareAttributes(stored, entity, model: model, reasons: &reasons, changes: &changes, defaults: &result.addedDefaults)
            compareRelationships(stored, entity, model: model, reasons: &reasons, changes: &changes)
            if !reasons.isEmpty {
                result.incompatible.append((entity.name, reasons))
            } else {
                // No change of its own: the hash moved with an ancestor's
                // change, which is judged on the ancestor.
                result.migratable.append((entity.name, changes.isEmpty ? ["an ancestor changed"] : changes))
            }
        }
        return result
    }

    private func compareAttributes(
        _ stored: Entity,
        _ entity: Entity,
        model: ObjectModel,
        reasons: inout [String],
        changes: inout [String],
        defaults: inout [String: [String: PropertyValue]]
    ) {
        for attribute in entity.attributes {
            guard let old = stored.attributes.first(where: { $0.name == attribute.name }) else {
                let description = model.attribute(named: attribute.name, in: entity.name)
                let defaultValue = description?.defaultValue ?? .null
                if !defaultValue.isNull {
                    defaults[entity.name, default: [:]][attribute.name] = defaultValue
                    changes.append("attribute '\(attribute.name)' added (existing objects get its default)")
                } else if attribute.isOptional {
                    changes.append("optional attribute '\(attribute.name)' added")
                } else {
                    reasons.append("mandatory attribute '\(attribute.name)' added without a default value")
                }
                continue
            }
            if old.type != attribute.type {
                reasons.append("attribute '\(attribute.name)' changed type from \(old.type) to \(attribute.type)")
            }
            if old.isOptional && !attribute.isOptional {
                reasons.append("attribute '\(attribute.name)' became mandatory")
            } else if !old.isOptional && attribute.isOptional {
                changes.append("attribute '\(attribute.name)' became optional")
            }
            if old.versionHashModifier != attribute.versionHashModifier {
                reasons.append("attribute '\(attribute.name)' version hash modifier changed")
            }
        }
        for old in stored.attributes where !entity.attributes.contains(where: { $0.name == old.name }) {
            changes.append("attribute '\(old.name)' removed")
        }
    }

    private func compareRelationships(_ stored: Entity, _ entity: Entity, model: ObjectModel, reasons: inout [String], changes: inout [String]) {
        for relationship in entity.relationships {
            guard let old = stored.relationships.first(where: { $0.name == relationship.name }) else {
                let minimum = model.relationship(named: relationship.name, in: entity.name)?.minCount ?? 0
                if relationship.isToMany ? minimum == 0 : relationship.isOptional {
                    changes.append("relationship '\(relationship.name)' added")
                } else {
                    reasons.append("mandatory relationship '\(relationship.name)' added")
                }
                continue
            }
            if old.destination != relationship.destination {
                reasons.append("relationship '\(relationship.name)' now points to \(relationship.destination) instead of \(old.destination)")
            }
            if old.inverse != relationship.inverse {
                reasons.append("relationship '\(relationship.name)' changed its inverse from \(old.inverse ?? "none") to \(relationship.inverse ?? "none")")
            }
            if old.isToMany != relationship.isToMany {
                reasons.append("relationship '\(relationship.name)' changed from \(old.isToMany ? "to-many" : "to-one") to \(relationship.isToMany ? "to-many" : "to-one")")
            }
            if old.isOrdered != relationship.isOrdered {
                reasons.append("relationship '\(relationship.name)' \(relationship.isOrdered ? "became" : "is no longer") ordered")
            }
            if old.isOptional && !relationship.isOptional {
                reasons.append("relationship '\(relationship.name)' became mandatory")
            } else if !old.isOptional && relationship.isOptional {
                changes.append("relationship '\(relationship.name)' became optional")
            }
            if old.versionHashModifier != relationship.versionHashModifier {
                reasons.append("relationship '\(relationship.name)' version hash modifier changed")
            }
        }
        for old in stored.relationships where !entity.relationships.contains(where: { $0.name == old.name }) {
            changes.append("relationship '\(old.name)' removed")
        }
    }
}
