import Foundation
import StrataWire

/// The served model (a GetModel answer) for people and as JSON.
enum ServedModelPrinter {
    /// A readable tree like `strata model inspect`, plus the stores.
    static func text(_ model: Strata_V1_GetModelResponse, style: Style) -> String {
        var lines: [String] = []
        lines.append(style.bold("Model \(model.name)") + ": \(model.entities.count) \(model.entities.count == 1 ? "entity" : "entities"), "
            + "\(model.configurations.count) \(model.configurations.count == 1 ? "store" : "stores")")
        for entity in model.entities {
            lines.append("")
            var header = style.bold(entity.name)
            if !entity.parent.isEmpty { header += " : \(entity.parent)" }
            if entity.isAbstract { header += "  (abstract)" }
            if !entity.configurations.isEmpty { header += style.dim("  in " + entity.configurations.joined(separator: ", ")) }
            lines.append(header)
            for attribute in entity.attributes {
                var line = "  \(attribute.name): \(attribute.type)\(attribute.optional ? "?" : "")"
                var notes: [String] = []
                if attribute.transient { notes.append("transient") }
                if !attribute.derivation.isEmpty { notes.append("derived = \(attribute.derivation)") }
                if attribute.hasDefaultValue, attribute.defaultValue.kind != nil {
                    notes.append("default \(ValueFormatter.text(attribute.defaultValue, type: attribute.type))")
                }
                if !attribute.valueTransformer.isEmpty { notes.append("transformer \(attribute.valueTransformer)") }
                if !notes.isEmpty { line += "  " + style.dim(notes.joined(separator: ", ")) }
                lines.append(line)
            }
            for relationship in entity.relationships {
                let target = relationship.toMany ? "[\(relationship.destination)]" : relationship.destination + (relationship.optional ? "?" : "")
                var notes: [String] = []
                if relationship.ordered { notes.append("ordered") }
                if relationship.transient { notes.append("transient") }
                notes.append(relationship.inverse.isEmpty ? "no inverse" : "inverse \(relationship.inverse)")
                notes.append(relationship.deleteRule)
                lines.append("  \(relationship.name) -> \(target)  " + style.dim(notes.joined(separator: ", ")))
            }
            for fetched in entity.fetchedProperties {
                let predicate = fetched.predicate.isEmpty ? "" : " where \(fetched.predicate)"
                lines.append("  \(fetched.name) => [\(fetched.destination)]  " + style.dim("fetched\(predicate)"))
            }
            for constraint in entity.uniquenessConstraints {
                lines.append("  " + style.dim("unique (\(constraint.names.joined(separator: ", ")))"))
            }
        }
        if !model.configurations.isEmpty {
            lines.append("")
            lines.append(style.bold("Configurations"))
            for configuration in model.configurations {
                let name = configuration.name.isEmpty ? "(default)" : configuration.name
                let access = configuration.readOnly ? ", read-only" : ""
                lines.append("  \(name): \(configuration.entities.joined(separator: ", "))  "
                    + style.dim("\(configuration.storeType) store \(configuration.storeID)\(access)"))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `{"name", "versionHash", "entities": […], "configurations": […]}`.
    static func json(_ model: Strata_V1_GetModelResponse) -> JSONValue {
        .object([
            ("name", .string(model.name)),
            ("versionHash", .string(hex(model.modelVersionHash))),
            ("entities", .array(model.entities.map(entity))),
            ("configurations", .array(model.configurations.map { configuration in
                .object([
                    ("name", .string(configuration.name)),
                    ("entities", .array(configuration.entities.map { .string($0) })),
                    ("storeID", .string(configuration.storeID)),
                    ("storeType", .string(configuration.storeType)),
                    ("readOnly", .bool(configuration.readOnly)),
                ])
            })),
        ])
    }

    private static func entity(_ entity: Strata_V1_EntityInfo) -> JSONValue {
        .object([
            ("name", .string(entity.name)),
            ("parent", entity.parent.isEmpty ? .null : .string(entity.parent)),
            ("abstract", .bool(entity.isAbstract)),
            ("configurations", .array(entity.configurations.map { .string($0) })),
            ("attributes", .array(entity.attributes.map { attribute in
                .object([
                    ("name", .string(attribute.name)),
                    ("type", .string(attribute.type)),
                    ("optional", .bool(attribute.optional)),
                    ("transient", .bool(attribute.transient)),
                    ("derivation", attribute.derivation.isEmpty ? .null : .string(attribute.derivation)),
                    ("default", attribute.hasDefaultValue ? ValueFormatter.json(attribute.defaultValue, type: attribute.type) : .null),
                    ("valueTransformer", attribute.valueTransformer.isEmpty ? .null : .string(attribute.valueTransformer)),
                ])
            })),
            ("relationships", .array(entity.relationships.map { relationship in
                .object([
                    ("name", .string(relationship.name)),
                    ("destination", .string(relationship.destination)),
                    ("inverse", relationship.inverse.isEmpty ? .null : .string(relationship.inverse)),
                    ("toMany", .bool(relationship.toMany)),
                    ("ordered", .bool(relationship.ordered)),
                    ("optional", .bool(relationship.optional)),
                    ("deleteRule", .string(relationship.deleteRule)),
                    ("transient", .bool(relationship.transient)),
                    ("minCount", .integer(Int64(relationship.minCount))),
                    ("maxCount", .integer(Int64(relationship.maxCount))),
                ])
            })),
            ("fetchedProperties", .array(entity.fetchedProperties.map { fetched in
                .object([
                    ("name", .string(fetched.name)),
                    ("destination", .string(fetched.destination)),
                    ("predicate", fetched.predicate.isEmpty ? .null : .string(fetched.predicate)),
                ])
            })),
            ("uniquenessConstraints", .array(entity.uniquenessConstraints.map { .array($0.names.map { .string($0) }) })),
            ("versionHash", .string(hex(entity.versionHash))),
        ])
    }

    private static func hex(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }
}
