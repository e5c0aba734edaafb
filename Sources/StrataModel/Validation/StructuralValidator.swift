/// Walks a model once and collects every structural problem; the engine
/// behind ``ObjectModel/structuralDiagnostics()``.
struct StructuralValidator {
    /// The model checked.
    let model: ObjectModel
    private var diagnostics: [ModelDiagnostic] = []

    /// Creates a validator for a model.
    init(model: ObjectModel) {
        self.model = model
    }

    /// Every problem, load problems first, then in model order.
    mutating func run() -> [ModelDiagnostic] {
        diagnostics = model.loadDiagnostics
        var occurrences: [String: Int] = [:]
        for entity in model.entities {
            let occurrence = (occurrences[entity.name] ?? 0) + 1
            occurrences[entity.name] = occurrence
            checkEntity(entity, occurrence: occurrence)
        }
        checkInheritanceCycles()
        checkConfigurations()
        checkFetchRequestTemplates()
        return diagnostics
    }

    // MARK: Entities

    /// Where one declaration of an entity is: the first one owns the plain
    /// line keys, later duplicates `Name#2`, `Name#3`, ….
    private struct Site {
        var entity: EntityDescription
        var occurrence: Int
        var name: String { entity.name }
    }

    private mutating func checkEntity(_ entity: EntityDescription, occurrence: Int) {
        let site = Site(entity: entity, occurrence: occurrence)
        if entity.name.isEmpty {
            report(.error, line(site), entity: nil, property: nil, "an entity has an empty name")
        } else if occurrence > 1 {
            let first = model.line(entity: entity.name).map { " (first declared at line \($0))" } ?? ""
            report(.error, line(site), entity: entity.name, property: nil,
                   "duplicate entity name '\(entity.name)'\(first)")
        }
        if let parent = entity.parentName, parent != entity.name, model.entity(named: parent) == nil {
            report(.error, line(site), entity: entity.name, property: nil, "parent entity '\(parent)' does not exist")
        }
        checkPropertyNames(site)
        for attribute in entity.attributes { checkAttribute(attribute, site) }
        for relationship in entity.relationships { checkRelationship(relationship, site) }
        for fetched in entity.fetchedProperties { checkFetchedProperty(fetched, site) }
        for (i, constraint) in entity.uniquenessConstraints.enumerated() {
            let at = model.line(key: "\(entity.name).uniquenessConstraint:\(i + 1)") ?? line(site)
            if constraint.isEmpty {
                report(.error, at, entity: entity.name, property: nil, "uniqueness constraint \(i + 1) names no property")
            }
            for name in constraint {
                checkIndexedProperty(name, site, at: at, what: "uniqueness constraint")
            }
        }
        for index in entity.fetchIndexes {
            let at = model.line(key: "\(entity.name).fetchIndex:\(index.name)") ?? line(site)
            for element in index.elements {
                checkIndexedProperty(element.property, site, at: at, what: "fetch index '\(index.name)'")
            }
        }
    }

    /// The entity's ancestors, nearest first, stopping at unknown parents and cycles.
    private func ancestors(of entity: EntityDescription) -> [EntityDescription] {
        var result: [EntityDescription] = []
        var seen: Set<String> = [entity.name]
        var next = entity.parentName
        while let name = next, !seen.contains(name), let parent = model.entity(named: name) {
            seen.insert(name)
            result.append(parent)
            next = parent.parentName
        }
        return result
    }

    private mutating func checkPropertyNames(_ site: Site) {
        let entity = site.entity
        let own: [(name: String, kind: String)] =
            entity.attributes.map { ($0.name, "attribute") }
            + entity.relationships.map { ($0.name, "relationship") }
            + entity.fetchedProperties.map { ($0.name, "fetched property") }
        let inherited = ancestors(of: entity)
        var seen: [String: (kind: String, count: Int)] = [:]
        // Declaration order within the file: the loader numbered repeated
        // names in the order it met them, which is element order.
        for (name, kind) in own {
            if name.isEmpty {
                report(.error, line(site), entity: entity.name, property: nil, "\(article(kind)) \(kind) has an empty name")
                continue
            }
            if let previous = seen[name] {
                let count = previous.count + 1
                seen[name] = (previous.kind, count)
                let at = site.occurrence == 1 ? (model.line(key: "\(entity.name).\(name)#\(count)") ?? line(site)) : line(site)
                let what = previous.kind == kind ? "\(kind)s" : "\(previous.kind) and \(kind)"
                report(.error, at, entity: entity.name, property: name, "duplicate property name '\(name)' (\(what))")
                continue
            }
            seen[name] = (kind, 1)
            if let ancestor = inherited.first(where: { declares($0, name) }) {
                report(.error, line(site, property: name), entity: entity.name, property: name,
                       "\(kind) '\(name)' is already declared by ancestor entity '\(ancestor.name)'")
            }
        }
    }

    private func declares(_ entity: EntityDescription, _ name: String) -> Bool {
        entity.attributes.contains { $0.name == name }
            || entity.relationships.contains { $0.name == name }
            || entity.fetchedProperties.contains { $0.name == name }
    }

    private func article(_ word: String) -> String {
        word.first.map { "aeiou".contains($0) } == true ? "an" : "a"
    }

    // MARK: Properties

    private mutating func checkAttribute(_ attribute: AttributeDescription, _ site: Site) {
        let at = line(site, property: attribute.name)
        let entity = site.name
        let name = attribute.name.isEmpty ? nil : attribute.name
        if attribute.type == .undefined, !attribute.isTransient, !hasLoadError(entity: entity, property: attribute.name) {
            report(.error, at, entity: entity, property: name,
                   "persisted attribute has no type (Undefined); only transient attributes may be untyped")
        }
        if attribute.isDerived, (attribute.derivationExpression ?? "").isEmpty {
            report(.error, at, entity: entity, property: name, "derived attribute has no derivation expression")
        }
        if let ordered = Self.compare(attribute.minValue, attribute.maxValue), ordered == .greater {
            report(.error, at, entity: entity, property: name,
                   "minimum \(attribute.minValue) is greater than maximum \(attribute.maxValue)")
        }
    }

    private func hasLoadError(entity: String, property: String) -> Bool {
        model.loadDiagnostics.contains { $0.severity == .error && $0.entity == entity && $0.property == property }
    }

    private enum Order { case less, equal, greater }

    /// Compares two bounds of the same kind; `nil` when either is missing or they differ in kind.
    private static func compare(_ lhs: PropertyValue, _ rhs: PropertyValue) -> Order? {
        func order<T: Comparable>(_ a: T, _ b: T) -> Order { a < b ? .less : (a == b ? .equal : .greater) }
        switch (lhs, rhs) {
        case let (.integer(a), .integer(b)): return order(a, b)
        case let (.double(a), .double(b)): return order(a, b)
        case let (.decimal(a), .decimal(b)): return order(a, b)
        case let (.date(a), .date(b)): return order(a, b)
        default: return nil
        }
    }

    private mutating func checkRelationship(_ relationship: RelationshipDescription, _ site: Site) {
        let at = line(site, property: relationship.name)
        let entity = site.name
        let name = relationship.name.isEmpty ? nil : relationship.name
        let destination = relationship.destinationEntityName
        var destinationExists = false
        if destination.isEmpty {
            report(.error, at, entity: entity, property: name, "relationship has no destination entity")
        } else if model.entity(named: destination) == nil {
            report(.error, at, entity: entity, property: name, "destination entity '\(destination)' does not exist")
        } else {
            destinationExists = true
        }

        if let inverseName = relationship.inverseName {
            if destinationExists {
                checkInverse(inverseName, of: relationship, site, at: at)
            }
        } else {
            report(.warning, at, entity: entity, property: name,
                   "relationship has no inverse; changes will not be reflected on '\(destination)'")
        }

        if relationship.minCount < 0 {
            report(.error, at, entity: entity, property: name, "minCount \(relationship.minCount) is negative")
        }
        if relationship.maxCount < 0 {
            report(.error, at, entity: entity, property: name, "maxCount \(relationship.maxCount) is negative")
        }
        if !relationship.isToMany {
            if relationship.minCount > 1 {
                report(.error, at, entity: entity, property: name,
                       "to-one relationship has minCount \(relationship.minCount); a to-one holds at most 1")
            }
            if relationship.maxCount > 1 {
                report(.error, at, entity: entity, property: name,
                       "to-one relationship has maxCount \(relationship.maxCount); a to-one holds at most 1")
            }
        }
        if relationship.maxCount > 0, relationship.minCount > relationship.maxCount,
           relationship.isToMany || (relationship.minCount <= 1 && relationship.maxCount <= 1) {
            report(.error, at, entity: entity, property: name,
                   "minCount \(relationship.minCount) is greater than maxCount \(relationship.maxCount)")
        }
    }

    private mutating func checkInverse(_ inverseName: String, of relationship: RelationshipDescription, _ site: Site, at: Int?) {
        let entity = site.name
        let name = relationship.name.isEmpty ? nil : relationship.name
        let destination = relationship.destinationEntityName
        guard let inverse = model.relationship(named: inverseName, in: destination) else {
            report(.error, at, entity: entity, property: name,
                   "inverse relationship '\(inverseName)' does not exist on '\(destination)'")
            return
        }
        let selfAndAncestors = [entity] + ancestors(of: site.entity).map(\.name)
        if !selfAndAncestors.contains(inverse.destinationEntityName) {
            report(.error, at, entity: entity, property: name,
                   "inverse '\(destination).\(inverseName)' does not point back: its destination is '\(inverse.destinationEntityName)', not '\(entity)' or an ancestor of it")
        } else if inverse.inverseName != relationship.name {
            let theirs = inverse.inverseName.map { "its inverse is '\($0)'" } ?? "it has no inverse"
            report(.error, at, entity: entity, property: name,
                   "inverse '\(destination).\(inverseName)' does not point back: \(theirs), not '\(relationship.name)'")
        }
    }

    private mutating func checkFetchedProperty(_ fetched: FetchedPropertyDescription, _ site: Site) {
        let at = line(site, property: fetched.name)
        let name = fetched.name.isEmpty ? nil : fetched.name
        if fetched.entityName.isEmpty {
            report(.error, at, entity: site.name, property: name, "fetched property has no target entity")
        } else if model.entity(named: fetched.entityName) == nil {
            report(.error, at, entity: site.name, property: name,
                   "fetched property's target entity '\(fetched.entityName)' does not exist")
        }
    }

    /// A property named by a uniqueness constraint or fetch index must be a
    /// persisted attribute or to-one relationship of the entity or an ancestor.
    private mutating func checkIndexedProperty(_ name: String, _ site: Site, at: Int?, what: String) {
        let chain = [site.entity] + ancestors(of: site.entity)
        if let attribute = chain.lazy.compactMap({ $0.attributes.first { $0.name == name } }).first {
            if attribute.isTransient {
                report(.error, at, entity: site.name, property: name, "\(what) names transient attribute '\(name)'")
            }
        } else if let relationship = chain.lazy.compactMap({ $0.relationships.first { $0.name == name } }).first {
            if relationship.isToMany {
                report(.error, at, entity: site.name, property: name, "\(what) names to-many relationship '\(name)'")
            } else if relationship.isTransient {
                report(.error, at, entity: site.name, property: name, "\(what) names transient relationship '\(name)'")
            }
        } else if chain.contains(where: { $0.fetchedProperties.contains { $0.name == name } }) {
            report(.error, at, entity: site.name, property: name, "\(what) names fetched property '\(name)'")
        } else {
            report(.error, at, entity: site.name, property: name, "\(what) names unknown property '\(name)'")
        }
    }

    // MARK: Inheritance cycles

    private mutating func checkInheritanceCycles() {
        var reported: Set<String> = []
        for entity in model.entities where !reported.contains(entity.name) {
            var path = [entity.name]
            var next = entity.parentName
            while let name = next, let parent = model.entity(named: name) {
                if name == entity.name {
                    path.append(name)
                    reported.formUnion(path)
                    report(.error, model.line(entity: entity.name), entity: entity.name, property: nil,
                           "inheritance cycle: " + path.joined(separator: " → "))
                    break
                }
                if path.contains(name) { break } // a cycle further up, reported from its own members
                path.append(name)
                next = parent.parentName
            }
        }
    }

    // MARK: Configurations and templates

    private mutating func checkConfigurations() {
        var seen: [String: Int] = [:]
        for configuration in model.configurations {
            let count = (seen[configuration.name] ?? 0) + 1
            seen[configuration.name] = count
            let key = "configuration:\(configuration.name)"
            let at = count == 1 ? model.line(key: key) : (model.line(key: "\(key)#\(count)") ?? model.line(key: key))
            if configuration.name.isEmpty {
                report(.error, at, entity: nil, property: nil, "a configuration has an empty name")
            } else if count > 1 {
                report(.error, at, entity: nil, property: nil, "duplicate configuration name '\(configuration.name)'")
            }
            for member in configuration.entityNames {
                if member.isEmpty {
                    report(.error, at, entity: nil, property: nil,
                           "configuration '\(configuration.name)' has a member entity with an empty name")
                } else if model.entity(named: member) == nil {
                    report(.error, at, entity: nil, property: member,
                           "configuration '\(configuration.name)' lists unknown entity '\(member)'")
                }
            }
        }
    }

    private mutating func checkFetchRequestTemplates() {
        var seen: [String: Int] = [:]
        for template in model.fetchRequestTemplates {
            let count = (seen[template.name] ?? 0) + 1
            seen[template.name] = count
            let key = "fetchRequest:\(template.name)"
            let at = count == 1 ? model.line(key: key) : (model.line(key: "\(key)#\(count)") ?? model.line(key: key))
            let name = template.name.isEmpty ? nil : template.name
            if template.name.isEmpty {
                report(.error, at, entity: nil, property: nil, "a fetch request template has an empty name")
            } else if count > 1 {
                report(.error, at, entity: nil, property: name, "duplicate fetch request template name '\(template.name)'")
            }
            if template.entityName.isEmpty {
                report(.error, at, entity: nil, property: name, "fetch request template has no entity")
            } else if model.entity(named: template.entityName) == nil {
                report(.error, at, entity: nil, property: name,
                       "fetch request template fetches unknown entity '\(template.entityName)'")
            }
        }
    }

    // MARK: Helpers

    private func line(_ site: Site, property: String? = nil) -> Int? {
        if site.occurrence > 1 {
            return model.line(key: "\(site.name)#\(site.occurrence)") ?? model.line(entity: site.name)
        }
        return model.line(entity: site.name, property: property)
    }

    private mutating func report(
        _ severity: ModelDiagnostic.Severity,
        _ line: Int?,
        entity: String?,
        property: String?,
        _ message: String
    ) {
        diagnostics.append(ModelDiagnostic(
            severity,
            file: model.sourceFile,
            line: line,
            entity: entity,
            property: property,
            message: message
        ))
    }
}
