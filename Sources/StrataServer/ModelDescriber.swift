import StrataModel
import StrataStore
import StrataWire

/// The GetModel answer: entities, properties, configurations and the
/// store serving each.
enum ModelDescriber {
    static func describe(_ model: ObjectModel, stores: [any PersistentStore]) -> Strata_V1_GetModelResponse {
        Strata_V1_GetModelResponse.with { response in
            response.name = model.name
            response.modelVersionHash = .init(model.modelVersionHash)
            response.entities = model.entities.map { entity in
                Strata_V1_EntityInfo.with { info in
                    info.name = entity.name
                    info.parent = entity.parentName ?? ""
                    info.isAbstract = entity.isAbstract
                    info.attributes = model.attributes(of: entity.name).map { attribute in
                        Strata_V1_AttributeInfo.with {
                            $0.name = attribute.name
                            $0.type = attribute.type.xcodeName
                            $0.optional = attribute.isOptional
                            $0.transient = attribute.isTransient
                            if !attribute.defaultValue.isNull { $0.defaultValue = attribute.defaultValue.wire }
                            $0.derivation = attribute.isDerived ? attribute.derivationExpression ?? "" : ""
                            $0.valueTransformer = attribute.valueTransformerName ?? ""
                            if !attribute.minValue.isNull { $0.minValue = attribute.minValue.wire }
                            if !attribute.maxValue.isNull { $0.maxValue = attribute.maxValue.wire }
                            $0.regularExpression = attribute.regularExpression ?? ""
                        }
                    }
                    info.relationships = model.relationships(of: entity.name).map { relationship in
                        Strata_V1_RelationshipInfo.with {
                            $0.name = relationship.name
                            $0.destination = relationship.destinationEntityName
                            $0.inverse = relationship.inverseName ?? ""
                            $0.toMany = relationship.isToMany
                            $0.ordered = relationship.isOrdered
                            $0.optional = relationship.isOptional
                            $0.deleteRule = relationship.deleteRule.rawValue
                            $0.transient = relationship.isTransient
                            $0.minCount = UInt32(clamping: relationship.minCount)
                            $0.maxCount = UInt32(clamping: relationship.maxCount)
                        }
                    }
                    info.fetchedProperties = model.fetchedProperties(of: entity.name).map { fetched in
                        Strata_V1_FetchedPropertyInfo.with {
                            $0.name = fetched.name
                            $0.destination = fetched.entityName
                            $0.predicate = fetched.predicate ?? ""
                        }
                    }
                    info.configurations = model.configurations(containing: entity.name)
                    info.uniquenessConstraints = entity.uniquenessConstraints.map { names in
                        Strata_V1_NameList.with { $0.names = names }
                    }
                    info.versionHash = .init(model.versionHash(ofEntity: entity.name))
                }
            }
            response.configurations = stores.map { store in
                let configuration = store.configurationName
                return Strata_V1_ConfigurationInfo.with {
                    $0.name = configuration ?? ""
                    $0.entities = model.entityNames(inConfiguration: configuration)
                    $0.storeID = store.identifier
                    $0.storeType = store.storeDescription.type.rawValue
                    $0.readOnly = store.isReadOnly
                }
            }
        }
    }
}
