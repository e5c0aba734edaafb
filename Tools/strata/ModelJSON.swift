import StrataModel

/// The JSON shape of `strata model inspect --json`:
///
/// ```
/// {"name", "entities": [{"name", "parent", "abstract", "versionHash",
///    "attributes": [{"name", "type", "optional", "transient", "derived", "derivation"}],
///    "relationships": [{"name", "destination", "toMany", "ordered", "inverse", "deleteRule",
///                       "optional", "minCount", "maxCount"}],
///    "fetchedProperties": [{"name", "entity", "predicate"}]}],
///  "configurations": [{"name", "entities": [...]}],
///  "fetchRequests": [{"name", "entity", "predicate", "fetchLimit", "resultType"}]}
/// ```
///
/// Missing values (`parent`, `inverse`, `predicate`, `derivation`) are
/// `null`; types and delete rules are spelled as Xcode spells them; each
/// entity lists only what it declares itself, in file order; only the
/// configurations written in the file are listed.
struct ModelJSON: Encodable {
    /// One entity.
    struct Entity: Encodable {
        var name: String
        var parent: String?
        var abstract: Bool
        var versionHash: String
        var attributes: [Attribute]
        var relationships: [Relationship]
        var fetchedProperties: [FetchedProperty]

        enum CodingKeys: String, CodingKey {
            case name, parent, abstract, versionHash, attributes, relationships, fetchedProperties
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(parent, forKey: .parent)
            try container.encode(abstract, forKey: .abstract)
            try container.encode(versionHash, forKey: .versionHash)
            try container.encode(attributes, forKey: .attributes)
            try container.encode(relationships, forKey: .relationships)
            try container.encode(fetchedProperties, forKey: .fetchedProperties)
        }
    }

    /// One attribute.
    struct Attribute: Encodable {
        var name: String
        var type: String
        var optional: Bool
        var transient: Bool
        var derived: Bool
        var derivation: String?

        enum CodingKeys: String, CodingKey {
            case name, type, optional, transient, derived, derivation
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(type, forKey: .type)
            try container.encode(optional, forKey: .optional)
            try container.encode(transient, forKey: .transient)
            try container.encode(derived, forKey: .derived)
            try container.encode(derivation, forKey: .derivation)
        }
    }

    /// One relationship.
    struct Relationship: Encodable {
        var name: String
        var destination: String
        var toMany: Bool
        var ordered: Bool
        var inverse: String?
        var deleteRule: String
        var optional: Bool
        var minCount: Int
        var maxCount: Int

        enum CodingKeys: String, CodingKey {
            case name, destination, toMany, ordered, inverse, deleteRule, optional, minCount, maxCount
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(destination, forKey: .destination)
            try container.encode(toMany, forKey: .toMany)
            try container.encode(ordered, forKey: .ordered)
            try container.encode(inverse, forKey: .inverse)
            try container.encode(deleteRule, forKey: .deleteRule)
            try container.encode(optional, forKey: .optional)
            try container.encode(minCount, forKey: .minCount)
            try container.encode(maxCount, forKey: .maxCount)
        }
    }

    /// One fetched property.
    struct FetchedProperty: Encodable {
        var name: String
        var entity: String
        var predicate: String?

        enum CodingKeys: String, CodingKey {
            case name, entity, predicate
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(entity, forKey: .entity)
            try container.encode(predicate, forKey: .predicate)
        }
    }

    /// One configuration written in the file.
    struct Configuration: Encodable {
        var name: String
        var entities: [String]
    }

    /// One fetch request template.
    struct FetchRequest: Encodable {
        var name: String
        var entity: String
        var predicate: String?
        var fetchLimit: Int
        var resultType: Int

        enum CodingKeys: String, CodingKey {
            case name, entity, predicate, fetchLimit, resultType
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(entity, forKey: .entity)
            try container.encode(predicate, forKey: .predicate)
            try container.encode(fetchLimit, forKey: .fetchLimit)
            try container.encode(resultType, forKey: .resultType)
        }
    }

    var name: String
    var entities: [Entity]
    var configurations: [Configuration]
    var fetchRequests: [FetchRequest]

    /// The JSON view of a model.
    init(_ model: ObjectModel) {
        name = model.name
        entities = model.entities.map { entity in
            Entity(
                name: entity.name,
                parent: entity.parentName,
                abstract: entity.isAbstract,
                versionHash: model.versionHash(ofEntity: entity.name).map { byte in
                    (byte < 16 ? "0" : "") + String(byte, radix: 16)
                }.joined(),
                attributes: entity.attributes.map {
                    Attribute(name: $0.name, type: $0.type.xcodeName, optional: $0.isOptional,
                              transient: $0.isTransient, derived: $0.isDerived, derivation: $0.derivationExpression)
                },
                relationships: entity.relationships.map {
                    Relationship(name: $0.name, destination: $0.destinationEntityName, toMany: $0.isToMany,
                                 ordered: $0.isOrdered, inverse: $0.inverseName, deleteRule: $0.deleteRule.rawValue,
                                 optional: $0.isOptional, minCount: $0.minCount, maxCount: $0.maxCount)
                },
                fetchedProperties: entity.fetchedProperties.map {
                    FetchedProperty(name: $0.name, entity: $0.entityName, predicate: $0.predicate)
                }
            )
        }
        configurations = model.configurations.map { Configuration(name: $0.name, entities: $0.entityNames) }
        fetchRequests = model.fetchRequestTemplates.map {
            FetchRequest(name: $0.name, entity: $0.entityName, predicate: $0.predicate,
                         fetchLimit: $0.fetchLimit, resultType: $0.resultType)
        }
    }
}
