import Foundation

/// Turns the element tree of an Xcode `contents` file into an ``ObjectModel``.
///
/// Lenient by design: unknown elements and attributes are ignored, missing
/// names become empty strings (validation reports them), and values that do
/// not parse are recorded as diagnostics instead of failing the load, so
/// that validation can report every problem at once.
struct XcodeModelDecoder {
    /// The file named in diagnostics and ``ObjectModel/sourceFile``.
    let file: String
    /// Problems found while decoding.
    private(set) var diagnostics: [ModelDiagnostic] = []
    /// Lines of elements, keyed as ``ObjectModel/sourceLines`` documents; a
    /// key seen again is recorded as `key#2`, `key#3`, ….
    private(set) var lines: [String: Int] = [:]

    /// Creates a decoder for a file.
    init(file: String) {
        self.file = file
    }

    /// Decodes a `<model>` root element.
    mutating func decodeModel(_ root: XMLElementNode, name: String) -> ObjectModel {
        var entities: [EntityDescription] = []
        var templates: [FetchRequestTemplate] = []
        var configurations: [ConfigurationDescription] = []
        for child in root.children {
            switch child.name {
            case "entity": entities.append(decodeEntity(child))
            case "fetchRequest": templates.append(decodeFetchRequest(child))
            case "configuration": configurations.append(decodeConfiguration(child))
            default: continue // `elements` (diagram layout) and anything unknown
            }
        }
        var model = ObjectModel(
            name: name,
            entities: entities,
            configurations: configurations,
            fetchRequestTemplates: templates,
            sourceFile: file,
            sourceLines: lines
        )
        model.loadDiagnostics = diagnostics
        return model
    }

    // MARK: Entities

    private mutating func decodeEntity(_ node: XMLElementNode) -> EntityDescription {
        let name = node[attribute: "name"] ?? ""
        record(name, node.line)
        var entity = EntityDescription(
            name: name,
            parent: nonEmpty(node[attribute: "parentEntity"]),
            isAbstract: flag(node, "isAbstract"),
            representedClassName: nonEmpty(node[attribute: "representedClassName"]),
            versionHashModifier: nonEmpty(node[attribute: "versionHashModifier"]),
            renamingIdentifier: nonEmpty(node[attribute: "elementID"]),
            userInfo: userInfo(of: node)
        )
        var compoundCount = 0
        for child in node.children {
            switch child.name {
            case "attribute":
                entity.attributes.append(decodeAttribute(child, entity: name))
            case "relationship":
                entity.relationships.append(decodeRelationship(child, entity: name))
            case "fetchedProperty":
                entity.fetchedProperties.append(decodeFetchedProperty(child, entity: name))
            case "fetchIndex":
                entity.fetchIndexes.append(decodeFetchIndex(child, entity: name, ordinal: entity.fetchIndexes.count + 1))
            case "compoundIndexes":
                for compound in child.children(named: "compoundIndex") {
                    compoundCount += 1
                    let indexName = "\(name)_compound_\(compoundCount)"
                    record("\(name).fetchIndex:\(indexName)", compound.line)
                    let elements = compound.children(named: "index").compactMap { nonEmpty($0[attribute: "value"]) }
                    entity.fetchIndexes.append(FetchIndex(name: indexName, elements: elements.map { FetchIndex.Element(property: $0) }))
                }
            case "uniquenessConstraints":
                for constraint in child.children(named: "uniquenessConstraint") {
                    entity.uniquenessConstraints.append(
                        constraint.children(named: "constraint").compactMap { nonEmpty($0[attribute: "value"]) }
                    )
                    record("\(name).uniquenessConstraint:\(entity.uniquenessConstraints.count)", constraint.line)
                }
            default:
                continue
            }
        }
        return entity
    }

    private mutating func decodeFetchIndex(_ node: XMLElementNode, entity: String, ordinal: Int) -> FetchIndex {
        let name = nonEmpty(node[attribute: "name"]) ?? "\(entity)_index_\(ordinal)"
        record("\(entity).fetchIndex:\(name)", node.line)
        var elements: [FetchIndex.Element] = []
        for element in node.children(named: "fetchIndexElement") {
            guard let property = nonEmpty(element[attribute: "property"]) else {
                if element[attribute: "expression"] != nil {
                    report(.warning, element.line, entity: entity, property: name,
                           "fetch index '\(name)': expression index elements are not supported; element ignored")
                } else {
                    report(.error, element.line, entity: entity, property: name,
                           "fetch index '\(name)' has an element without a property")
                }
                continue
            }
            let order = element[attribute: "order"]?.lowercased() ?? "ascending"
            elements.append(FetchIndex.Element(
                property: property,
                ascending: order != "descending",
                kind: nonEmpty(element[attribute: "type"]) ?? "Binary"
            ))
        }
        return FetchIndex(name: name, elements: elements)
    }

    // MARK: Properties

    private mutating func decodeAttribute(_ node: XMLElementNode, entity: String) -> AttributeDescription {
        let name = node[attribute: "name"] ?? ""
        record("\(entity).\(name)", node.line)
        var type = AttributeType.undefined
        if let typeName = node[attribute: "attributeType"] {
            if let known = AttributeType(rawValue: typeName) {
                type = known
            } else {
                report(.error, node.line, entity: entity, property: name, "unknown attribute type '\(typeName)'")
            }
        }
        var attribute = AttributeDescription(
            name: name,
            type: type,
            isOptional: flag(node, "optional"),
            isTransient: flag(node, "transient"),
            isDerived: flag(node, "derived"),
            derivationExpression: nonEmpty(node[attribute: "derivationExpression"]),
            regularExpression: nonEmpty(node[attribute: "regularExpressionString"]),
            valueTransformerName: nonEmpty(node[attribute: "valueTransformerName"]),
            customClassName: nonEmpty(node[attribute: "customClassName"]),
            allowsExternalBinaryDataStorage: flag(node, "allowsExternalBinaryDataStorage"),
            preserveAfterDeletion: flag(node, "preserveAfterDeletion"),
            isIndexed: flag(node, "indexed"),
            versionHashModifier: nonEmpty(node[attribute: "versionHashModifier"]),
            renamingIdentifier: nonEmpty(node[attribute: "elementID"]),
            userInfo: userInfo(of: node)
        )
        attribute.defaultValue = typedValue(node, entity: entity, property: name, type: type, what: "default value",
                                            intervalKey: "defaultDateTimeInterval", stringKey: "defaultValueString",
                                            parse: PropertyValue.parseXcodeDefault)
        attribute.minValue = typedValue(node, entity: entity, property: name, type: type, what: "minimum",
                                        intervalKey: "minDateTimeInterval", stringKey: "minValueString",
                                        parse: PropertyValue.parseXcodeBound)
        attribute.maxValue = typedValue(node, entity: entity, property: name, type: type, what: "maximum",
                                        intervalKey: "maxDateTimeInterval", stringKey: "maxValueString",
                                        parse: PropertyValue.parseXcodeBound)
        return attribute
    }

    /// Reads a default or bound: for dates the `…DateTimeInterval` attribute
    /// wins over the string; anything that does not parse stays `.null` and
    /// is reported.
    private mutating func typedValue(
        _ node: XMLElementNode,
        entity: String,
        property: String,
        type: AttributeType,
        what: String,
        intervalKey: String,
        stringKey: String,
        parse: (String, AttributeType) -> PropertyValue.XcodeParseResult
    ) -> PropertyValue {
        let result: PropertyValue.XcodeParseResult
        let source: String
        if type == .date, let interval = node[attribute: intervalKey] {
            result = PropertyValue.parseXcodeTimeInterval(interval)
            source = intervalKey
        } else if let text = node[attribute: stringKey] {
            result = parse(text, type)
            source = stringKey
        } else {
            return .null
        }
        switch result {
        case .value(let value):
            return value
        case .invalid(let reason):
            report(.error, node.line, entity: entity, property: property,
                   "\(what) (\(source)) does not fit type \(type.xcodeName): \(reason)")
        case .unsupported:
            report(.warning, node.line, entity: entity, property: property,
                   "\(type.xcodeName) attributes take no \(what); \(source) ignored")
        }
        return .null
    }

    private mutating func decodeRelationship(_ node: XMLElementNode, entity: String) -> RelationshipDescription {
        let name = node[attribute: "name"] ?? ""
        record("\(entity).\(name)", node.line)
        let minCount = count(node, "minCount", entity: entity, property: name) ?? 0
        let maxCount = count(node, "maxCount", entity: entity, property: name)
        var rule = DeleteRule.nullify
        if let ruleName = node[attribute: "deletionRule"] {
            if let known = DeleteRule(rawValue: ruleName)
                ?? DeleteRule.allCases.first(where: { $0.rawValue.caseInsensitiveCompare(ruleName) == .orderedSame }) {
                rule = known
            } else {
                report(.error, node.line, entity: entity, property: name,
                       "unknown delete rule '\(ruleName)' (expected Nullify, Cascade, Deny or No Action)")
            }
        }
        let inverse = nonEmpty(node[attribute: "inverseName"])
        return RelationshipDescription(
            name: name,
            destination: node[attribute: "destinationEntity"] ?? "",
            inverse: inverse,
            inverseEntityName: inverse == nil ? nil : nonEmpty(node[attribute: "inverseEntity"]),
            toMany: flag(node, "toMany"),
            ordered: flag(node, "ordered"),
            optional: flag(node, "optional"),
            transient: flag(node, "transient"),
            minCount: minCount,
            maxCount: maxCount,
            deleteRule: rule,
            indexed: flag(node, "indexed"),
            versionHashModifier: nonEmpty(node[attribute: "versionHashModifier"]),
            renamingIdentifier: nonEmpty(node[attribute: "elementID"]),
            userInfo: userInfo(of: node)
        )
    }

    private mutating func count(_ node: XMLElementNode, _ key: String, entity: String, property: String) -> Int? {
        guard let text = node[attribute: key] else { return nil }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            report(.error, node.line, entity: entity, property: property, "\(key) '\(text)' is not a whole number ≥ 0")
            return nil
        }
        return value
    }

    private mutating func decodeFetchedProperty(_ node: XMLElementNode, entity: String) -> FetchedPropertyDescription {
        let name = node[attribute: "name"] ?? ""
        record("\(entity).\(name)", node.line)
        let request = node.child(named: "fetchRequest")
        return FetchedPropertyDescription(
            name: name,
            entity: request?[attribute: "entity"] ?? "",
            predicate: nonEmpty(request?[attribute: "predicateString"]),
            userInfo: userInfo(of: node)
        )
    }

    // MARK: Model-level elements

    private mutating func decodeFetchRequest(_ node: XMLElementNode) -> FetchRequestTemplate {
        let name = node[attribute: "name"] ?? ""
        record("fetchRequest:\(name)", node.line)
        return FetchRequestTemplate(
            name: name,
            entity: node[attribute: "entity"] ?? "",
            predicate: nonEmpty(node[attribute: "predicateString"]),
            fetchLimit: integer(node, "fetchLimit", template: name),
            resultType: integer(node, "resultType", template: name)
        )
    }

    private mutating func integer(_ node: XMLElementNode, _ key: String, template: String) -> Int {
        guard let text = node[attribute: key] else { return 0 }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            report(.warning, node.line, entity: nil, property: template,
                   "fetch request '\(template)': \(key) '\(text)' is not a whole number ≥ 0; 0 used")
            return 0
        }
        return value
    }

    private mutating func decodeConfiguration(_ node: XMLElementNode) -> ConfigurationDescription {
        let name = node[attribute: "name"] ?? ""
        record("configuration:\(name)", node.line)
        let members = node.children(named: "memberEntity").map { $0[attribute: "name"] ?? "" }
        return ConfigurationDescription(name: name, entities: members)
    }

    // MARK: Helpers

    /// Xcode writes flags as `"YES"` and omits them when false; `true` and `1` are accepted too.
    private func flag(_ node: XMLElementNode, _ key: String) -> Bool {
        switch node[attribute: key]?.trimmingCharacters(in: .whitespaces).lowercased() {
        case "yes", "true", "1": true
        default: false
        }
    }

    private func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    private func userInfo(of node: XMLElementNode) -> [String: String] {
        var info: [String: String] = [:]
        for block in node.children(named: "userInfo") {
            for entry in block.children(named: "entry") {
                guard let key = entry[attribute: "key"] else { continue }
                info[key] = entry[attribute: "value"] ?? ""
            }
        }
        return info
    }

    private mutating func record(_ key: String, _ line: Int) {
        guard lines[key] != nil else {
            lines[key] = line
            return
        }
        var ordinal = 2
        while lines["\(key)#\(ordinal)"] != nil { ordinal += 1 }
        lines["\(key)#\(ordinal)"] = line
    }

    private mutating func report(
        _ severity: ModelDiagnostic.Severity,
        _ line: Int,
        entity: String?,
        property: String?,
        _ message: String
    ) {
        diagnostics.append(ModelDiagnostic(severity, file: file, line: line, entity: entity, property: property, message: message))
    }
}
