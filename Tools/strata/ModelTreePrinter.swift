import StrataModel

/// Renders a model as a readable, indented tree for `strata model inspect`.
///
/// ```
/// Model Books (Books.xcdatamodel/contents): 2 entities, 1 configuration, 1 fetch request
///
/// Book
///   title: String
///   subtitle: String?  transient
///   author -> Author?  inverse books, Nullify
///   related => NewEntity  where …
/// ```
enum ModelTreePrinter {
    /// The whole tree, ending with a newline.
    static func render(_ model: ObjectModel) -> String {
        var lines: [String] = []
        let source = model.sourceFile.map { " (\($0))" } ?? ""
        lines.append("Model \(model.name)\(source): \(count(model.entities.count, "entity", "entities")), "
            + "\(count(model.configurations.count, "configuration", "configurations")), "
            + "\(count(model.fetchRequestTemplates.count, "fetch request", "fetch requests"))")
        for entity in model.entities {
            lines.append("")
            var header = entity.name
            if let parent = entity.parentName { header += " : \(parent)" }
            if entity.isAbstract { header += "  (abstract)" }
            if let className = entity.representedClassName { header += "  class \(className)" }
            lines.append(header)
            for attribute in entity.attributes {
                var line = "  \(attribute.name): \(attribute.type.xcodeName)\(attribute.isOptional ? "?" : "")"
                var notes: [String] = []
                if attribute.isTransient { notes.append("transient") }
                if attribute.isDerived { notes.append("derived = \(attribute.derivationExpression ?? "?")") }
                if !attribute.defaultValue.isNull { notes.append("default \(attribute.defaultValue)") }
                if !attribute.minValue.isNull { notes.append("min \(attribute.minValue)") }
                if !attribute.maxValue.isNull { notes.append("max \(attribute.maxValue)") }
                if !notes.isEmpty { line += "  " + notes.joined(separator: ", ") }
                lines.append(line)
            }
            for relationship in entity.relationships {
                let target = relationship.isToMany
                    ? "[\(relationship.destinationEntityName)]"
                    : relationship.destinationEntityName + (relationship.isOptional ? "?" : "")
                var notes: [String] = []
                if relationship.isOrdered { notes.append("ordered") }
                if relationship.isTransient { notes.append("transient") }
                if relationship.minCount > 0 || (relationship.isToMany && relationship.maxCount > 0) {
                    notes.append("count \(relationship.minCount)…\(relationship.maxCount == 0 ? "" : String(relationship.maxCount))")
                }
                notes.append(relationship.inverseName.map { "inverse \($0)" } ?? "no inverse")
                notes.append(relationship.deleteRule.rawValue)
                lines.append("  \(relationship.name) -> \(target)  " + notes.joined(separator: ", "))
            }
            for fetched in entity.fetchedProperties {
                let predicate = fetched.predicate.map { " where \($0)" } ?? ""
                lines.append("  \(fetched.name) => [\(fetched.entityName)]  fetched\(predicate)")
            }
        }
        if !model.configurations.isEmpty {
            lines.append("")
            lines.append("Configurations")
            for configuration in model.configurations {
                lines.append("  \(configuration.name): \(configuration.entityNames.joined(separator: ", "))")
            }
        }
        if !model.fetchRequestTemplates.isEmpty {
            lines.append("")
            lines.append("Fetch requests")
            for template in model.fetchRequestTemplates {
                var line = "  \(template.name): \(template.entityName)"
                if let predicate = template.predicate { line += " where \(predicate)" }
                if template.fetchLimit > 0 { line += ", limit \(template.fetchLimit)" }
                if template.resultType != 0 { line += ", result type \(template.resultType)" }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func count(_ n: Int, _ singular: String, _ plural: String) -> String {
        "\(n) \(n == 1 ? singular : plural)"
    }
}
