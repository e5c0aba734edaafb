import Foundation
import Testing
@testable import StrataModel

/// A deliberately independent reading of a `contents` file for tests: it
/// scans lines with a regular expression instead of using an XML parser, so
/// that the loader's results can be checked against it. It relies on real
/// model files writing one element per line, as Xcode does (and the
/// fixtures and the shared reference files do).
struct ContentsScanner {
    /// An element's attributes, entity references decoded.
    typealias Attributes = [String: String]

    /// An entity as written.
    struct Entity {
        var attributes: Attributes
        var properties: [Attributes] = []          // attribute elements
        var relationships: [Attributes] = []
        var fetchedProperties: [(name: String, request: Attributes)] = []
    }

    /// Entities in file order.
    private(set) var entities: [Entity] = []
    /// Configurations in file order: name and member names.
    private(set) var configurations: [(name: String, members: [String])] = []

    /// Scans a file's text.
    init(text: String) {
        var current: Entity?
        var inFetchedProperty = false
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            let attrs = Self.attributes(in: line)
            if line.hasPrefix("<entity ") {
                current = Entity(attributes: attrs)
                if line.hasSuffix("/>") {
                    if let entity = current { entities.append(entity) }
                    current = nil
                }
            } else if line.hasPrefix("</entity>") {
                if let entity = current { entities.append(entity) }
                current = nil
            } else if line.hasPrefix("<attribute "), current != nil {
                current?.properties.append(attrs)
            } else if line.hasPrefix("<relationship "), current != nil {
                current?.relationships.append(attrs)
            } else if line.hasPrefix("<fetchedProperty "), current != nil {
                current?.fetchedProperties.append((attrs["name"] ?? "", [:]))
                inFetchedProperty = !line.hasSuffix("/>")
            } else if line.hasPrefix("</fetchedProperty>") {
                inFetchedProperty = false
            } else if line.hasPrefix("<fetchRequest "), inFetchedProperty, current != nil {
                if var entity = current, !entity.fetchedProperties.isEmpty {
                    entity.fetchedProperties[entity.fetchedProperties.count - 1].request = attrs
                    current = entity
                }
            } else if line.hasPrefix("<configuration ") {
                configurations.append((attrs["name"] ?? "", []))
            } else if line.hasPrefix("<memberEntity "), !configurations.isEmpty {
                configurations[configurations.count - 1].members.append(attrs["name"] ?? "")
            }
        }
    }

    /// Checks a loaded model against a scan of `contentsFile`, the file it
    /// was loaded from: entities, their properties and flags, fetched
    /// properties and configurations agree, and the model has no structural
    /// errors (warnings, such as missing inverses, are allowed).
    static func expect(_ model: ObjectModel, toMatchScanOf contentsFile: URL) throws {
        let scan = ContentsScanner(text: try String(contentsOf: contentsFile, encoding: .utf8))
        #expect(model.entities.map(\.name) == scan.entities.map { $0.attributes["name"] ?? "" })
        for (entity, scanned) in zip(model.entities, scan.entities) {
            #expect(entity.parentName == scanned.attributes["parentEntity"], "\(entity.name)")
            #expect(entity.isAbstract == (scanned.attributes["isAbstract"] == "YES"), "\(entity.name)")
            #expect(entity.representedClassName == scanned.attributes["representedClassName"], "\(entity.name)")
            #expect(entity.attributes.map(\.name) == scanned.properties.map { $0["name"] ?? "" })
            for (attribute, xml) in zip(entity.attributes, scanned.properties) {
                let label = "\(entity.name).\(attribute.name)"
                #expect(attribute.type.rawValue == xml["attributeType"], "\(label)")
                #expect(attribute.isOptional == (xml["optional"] == "YES"), "\(label)")
                #expect(attribute.isTransient == (xml["transient"] == "YES"), "\(label)")
                #expect(attribute.isDerived == (xml["derived"] == "YES"), "\(label)")
                #expect(attribute.derivationExpression == xml["derivationExpression"], "\(label)")
                #expect(attribute.customClassName == xml["customClassName"], "\(label)")
                #expect(attribute.valueTransformerName == xml["valueTransformerName"], "\(label)")
                #expect(model.line(entity: entity.name, property: attribute.name) != nil, "\(label)")
            }
            #expect(entity.relationships.map(\.name) == scanned.relationships.map { $0["name"] ?? "" })
            for (relationship, xml) in zip(entity.relationships, scanned.relationships) {
                let label = "\(entity.name).\(relationship.name)"
                #expect(relationship.destinationEntityName == xml["destinationEntity"], "\(label)")
                #expect(relationship.inverseName == xml["inverseName"], "\(label)")
                #expect(relationship.isToMany == (xml["toMany"] == "YES"), "\(label)")
                #expect(relationship.isOrdered == (xml["ordered"] == "YES"), "\(label)")
                #expect(relationship.isOptional == (xml["optional"] == "YES"), "\(label)")
                #expect(relationship.deleteRule.rawValue == (xml["deletionRule"] ?? "Nullify"), "\(label)")
                #expect(relationship.minCount == Int(xml["minCount"] ?? "0"), "\(label)")
                let expectedMax = xml["maxCount"].flatMap { Int($0) } ?? (xml["toMany"] == "YES" ? 0 : 1)
                #expect(relationship.maxCount == expectedMax, "\(label)")
            }
            #expect(entity.fetchedProperties.map(\.name) == scanned.fetchedProperties.map(\.name))
            for (fetched, xml) in zip(entity.fetchedProperties, scanned.fetchedProperties) {
                #expect(fetched.entityName == xml.request["entity"])
                #expect(fetched.predicate == xml.request["predicateString"])
            }
        }
        #expect(model.configurations.map(\.name) == scan.configurations.map(\.name))
        #expect(model.configurations.map(\.entityNames) == scan.configurations.map(\.members))
        let errors = model.structuralDiagnostics().filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(errors)")
    }

    /// `key="value"` pairs of one line.
    static func attributes(in line: String) -> Attributes {
        var result: Attributes = [:]
        for match in line.matches(of: /([A-Za-z_][A-Za-z0-9_.:-]*)="([^"]*)"/) {
            result[String(match.output.1)] = unescape(String(match.output.2))
        }
        return result
    }

    /// Decodes the five predefined XML entities.
    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The expected `strata model inspect --json` projection (only the
    /// documented keys), as plain JSON-compatible values.
    var expectedInspectJSON: [String: Any] {
        func nullable(_ value: String?) -> Any { value.map { $0 as Any } ?? NSNull() }
        let entityList: [[String: Any]] = entities.map { entity in
            [
                "name": entity.attributes["name"] ?? "",
                "parent": nullable(entity.attributes["parentEntity"]),
                "abstract": entity.attributes["isAbstract"] == "YES",
                "attributes": entity.properties.map { a -> [String: Any] in
                    [
                        "name": a["name"] ?? "",
                        "type": a["attributeType"] ?? "Undefined",
                        "optional": a["optional"] == "YES",
                        "transient": a["transient"] == "YES",
                        "derived": a["derived"] == "YES",
                    ]
                },
                "relationships": entity.relationships.map { r -> [String: Any] in
                    [
                        "name": r["name"] ?? "",
                        "destination": r["destinationEntity"] ?? "",
                        "toMany": r["toMany"] == "YES",
                        "ordered": r["ordered"] == "YES",
                        "inverse": nullable(r["inverseName"]),
                        "deleteRule": r["deletionRule"] ?? "Nullify",
                    ]
                },
                "fetchedProperties": entity.fetchedProperties.map { f -> [String: Any] in
                    [
                        "name": f.name,
                        "entity": f.request["entity"] ?? "",
                        "predicate": nullable(f.request["predicateString"]),
                    ]
                },
            ]
        }
        return [
            "entities": entityList,
            "configurations": configurations.map { ["name": $0.name, "entities": $0.members] as [String: Any] },
        ]
    }
}
