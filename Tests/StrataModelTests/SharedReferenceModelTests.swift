import Foundation
import Testing
@testable import StrataModel

/// Facts about the five shared real-world models (`../shared/reference/models`
/// beside the checkout, or `$STRATA_REFERENCE_MODELS`): real Xcode files from
/// public repositories, which this repository does not hold. The package's own
/// fixtures cover the same ground in ``XcodeModelLoaderTests``,
/// ``ModelCommandTests`` and ``VersionHashTests``; this suite checks that real
/// files load the same way. Skipped where the folder is missing, except on CI.
@Suite(.enabled(if: ReferenceModels.suiteRuns, "shared reference models not found at \(ReferenceModels.directory.path); skipped"))
struct SharedReferenceModelTests {
    /// Runs `strata` with these arguments.
    private func strata(_ arguments: String...) throws -> StrataTool.Run {
        try StrataTool.run(arguments)
    }

    /// On CI the suite runs even without the folder, and fails here first.
    @Test func theSharedModelsArePresent() throws {
        try #require(ReferenceModels.available,
                     "the shared reference models are missing at \(ReferenceModels.directory.path) (CI=true: they must be there)")
        for name in ReferenceModels.names {
            #expect(FileManager.default.fileExists(atPath: ReferenceModels.url(name).path), "\(name).contents")
        }
    }

    // MARK: Loading

    @Test(arguments: ReferenceModels.names)
    func loadsEveryReferenceModelLikeAnIndependentScan(name: String) throws {
        let url = ReferenceModels.url(name)
        let model = try XcodeModelLoader.load(contentsOf: url)
        #expect(model.name == name)
        #expect(model.sourceFile == url.path)
        try ContentsScanner.expect(model, toMatchScanOf: url)
    }

    @Test func swiftGenModel() throws {
        let model = try ReferenceModels.load("SwiftGen_SwiftGen")
        #expect(model.entities.map(\.name) == [
            "AbstractEntity", "AutoClassGen", "AutoExtensionGen", "ChildEntity",
            "ImpossibleType", "MainEntity", "NewEntity", "SecondaryEntity",
        ])
        let abstract = try #require(model.entity(named: "AbstractEntity"))
        #expect(abstract.isAbstract)
        #expect(model.subentities(of: "AbstractEntity") == ["NewEntity"])

        let child = try #require(model.entity(named: "ChildEntity"))
        #expect(child.parentName == "MainEntity")
        #expect(child.representedClassName == "SwiftGen.ChildEntity")
        #expect(child.userInfo == ["key": "value"])
        #expect(child.attributes.map(\.name) == ["canonicalOptionalString", "derivedCount", "now"])
        #expect(child.attributes.map(\.derivationExpression) == ["canonical:(optionalString)", "oneToMany.@count", "now()"])
        #expect(child.attributes.allSatisfy { $0.isDerived })
        #expect(child.attributes.map(\.type) == [.string, .integer64, .double])
        #expect(child.attributes.map(\.isOptional) == [true, true, false])
        // Inherited from MainEntity: 27 attributes of its own + 3 derived.
        #expect(model.attributes(of: "ChildEntity").count == 30)

        let main = try #require(model.entity(named: "MainEntity"))
        #expect(main.representedClassName == "CustomMainEntity")
        #expect(main.userInfo == ["key": "value"])
        let expected: [(String, AttributeType, Bool)] = [
            ("attributedString", .transformable, true), ("binaryData", .binary, true),
            ("boolean", .boolean, false), ("date", .date, true), ("decimal", .decimal, true),
            ("double", .double, false), ("float", .float, false), ("int16", .integer16, false),
            ("int32", .integer32, false), ("int64", .integer64, false), ("integerEnum", .integer16, true),
            ("integerOptionSet", .integer16, true), ("optionalBoolean", .boolean, true),
            ("optionalDouble", .double, true), ("optionalFloat", .float, false),
            ("optionalInt16", .integer16, true), ("optionalInt32", .integer32, false),
            ("optionalInt64", .integer64, true), ("optionalString", .string, true), ("string", .string, false),
            ("stringEnum", .string, true), ("transformable", .transformable, true),
            ("transformableCustomArray", .transformable, true), ("transformableCustomPolyline", .transformable, true),
            ("transient", .string, true), ("uri", .uri, true), ("uuid", .uuid, true),
        ]
        #expect(main.attributes.count == expected.count)
        for (attribute, (name, type, optional)) in zip(main.attributes, expected) {
            #expect(attribute.name == name)
            #expect(attribute.type == type, "\(name)")
            #expect(attribute.isOptional == optional, "\(name)")
        }
        let byName = Dictionary(uniqueKeysWithValues: main.attributes.map { ($0.name, $0) })
        #expect(byName["transient"]?.isTransient == true)
        #expect(main.attributes.filter(\.isTransient).map(\.name) == ["transient"])
        #expect(byName["attributedString"]?.customClassName == "NSAttributedString")
        #expect(byName["transformableCustomArray"]?.customClassName == "CustomArray")
        #expect(byName["transformable"]?.customClassName == nil)
        #expect(byName["binaryData"]?.userInfo == ["key": "value"])
        #expect(byName["integerOptionSet"]?.userInfo == ["nonOptionalInit": "true", "RawType": "IntegerOptionSet", "unwrapOptional": "true"])
        #expect(byName["decimal"]?.defaultValue == .decimal(try #require(Decimal(string: "0.0"))))
        #expect(byName["double"]?.defaultValue == .double(0))
        #expect(byName["float"]?.defaultValue == .double(0))
        #expect(byName["int16"]?.defaultValue == .integer(0))
        #expect(byName["int64"]?.defaultValue == .integer(0))
        #expect(byName["boolean"]?.defaultValue == .null)
        #expect(byName["string"]?.defaultValue == .null)

        #expect(main.relationships.map(\.name) == ["manyToMany", "oneToMany", "oneToOne"])
        let manyToMany = main.relationships[0], oneToMany = main.relationships[1], oneToOne = main.relationships[2]
        #expect(manyToMany.destinationEntityName == "SecondaryEntity")
        #expect(manyToMany.inverseName == "manyToMany")
        #expect(manyToMany.inverseEntityName == "SecondaryEntity")
        #expect(manyToMany.isToMany && !manyToMany.isOrdered && manyToMany.isOptional)
        #expect(manyToMany.maxCount == 0 && manyToMany.minCount == 0)
        #expect(oneToMany.isToMany && oneToMany.isOrdered)
        #expect(!oneToOne.isToMany && oneToOne.maxCount == 1)
        #expect(main.relationships.allSatisfy { $0.deleteRule == .nullify })

        #expect(main.fetchedProperties == [
            FetchedPropertyDescription(name: "fetchedProperty", entity: "NewEntity", predicate: "true == true", userInfo: ["key": "value"]),
        ])

        let newEntity = try #require(model.entity(named: "NewEntity"))
        #expect(newEntity.parentName == "AbstractEntity")
        #expect(newEntity.representedClassName == "CheckedNewEntity")
        #expect(newEntity.fetchIndexes == [
            FetchIndex(name: "byIdentifierIndex", elements: [.init(property: "identifier", ascending: true, kind: "Binary")]),
        ])
        #expect(newEntity.uniquenessConstraints == [["identifier"]])

        let secondary = try #require(model.entity(named: "SecondaryEntity"))
        #expect(secondary.relationships.map(\.isToMany) == [true, false, false])
        #expect(secondary.relationships.map(\.inverseName) == ["manyToMany", "oneToMany", "oneToOne"])
        #expect(model.inverse(of: oneToMany)?.name == "oneToMany")
        #expect(model.inverse(of: oneToMany)?.isToMany == false)

        #expect(model.fetchRequestTemplates == [
            FetchRequestTemplate(name: "DictionaryFetchRequest", entity: "MainEntity", predicate: nil, fetchLimit: 0, resultType: 2),
            FetchRequestTemplate(name: "ObjectFetchRequest", entity: "MainEntity", predicate: "uuid == $UUID"),
            FetchRequestTemplate(name: "ObjectIDFetchRequest", entity: "MainEntity",
                                 predicate: "oneToOne.name == $NAME OR string == $NEEDLE", resultType: 1),
        ])
        #expect(model.configurations == [ConfigurationDescription(name: "Custom", entities: ["NewEntity"])])

        // Lines: the XML declaration is line 1, <model> line 2.
        #expect(model.line(entity: "AbstractEntity") == 3)
        #expect(model.line(entity: "ChildEntity") == 6)
        #expect(model.line(entity: "MainEntity") == 15)
        #expect(model.line(entity: "MainEntity", property: "attributedString") == 16)
        #expect(model.line(entity: "MainEntity", property: "fetchedProperty") == 65)
        #expect(model.line(key: "fetchRequest:DictionaryFetchRequest") == 92)
        #expect(model.line(key: "configuration:Custom") == 95)
        #expect(model.loadDiagnostics.isEmpty)
        #expect(model.structuralDiagnostics().isEmpty)
    }

    @Test func mogeneratorModel() throws {
        let model = try ReferenceModels.load("rentzsch_mogenerator")
        #expect(model.entities.map(\.name) == [
            "Child", "ConcreteEntityWithCustomClass1", "ConcreteEntityWithCustomClass2", "EntitySansCustomClass",
            "EntitySansCustomClass2", "EntityWithBaseClass", "Human", "Parent", "Uncle",
        ])
        #expect(model.entities.filter { $0.parentName != nil }.map(\.name) == [
            "Child", "ConcreteEntityWithCustomClass1", "ConcreteEntityWithCustomClass2", "Parent", "Uncle",
        ])
        #expect(model.subentities(of: "Human") == ["Child", "Parent", "Uncle"])
        #expect(model.subentities(of: "EntitySansCustomClass2") == ["ConcreteEntityWithCustomClass1", "ConcreteEntityWithCustomClass2"])
        #expect(model.entities.allSatisfy { !$0.isAbstract })

        let human = try #require(model.entity(named: "Human"))
        #expect(human.representedClassName == "HumanMO")
        #expect(human.userInfo == ["additionalHeaderFileName": "Gender.h", "key with.dots...": "value with \"quotes\""])
        #expect(human.attributes.map(\.name) == ["age", "gender", "humanName"])
        #expect(human.attributes.map(\.type) == [.integer16, .integer16, .string])
        #expect(human.attributes.map(\.isOptional) == [false, false, true])
        #expect(human.attributes[0].minValue == .integer(0))
        #expect(human.attributes[0].maxValue == .null)
        #expect(human.attributes[0].defaultValue == .integer(0))
        #expect(human.attributes[0].userInfo == ["mogenerator.readonly": "true"])
        #expect(human.attributes[1].userInfo == ["attributeValueScalarType": "Gender"])
        let meaningless = try #require(human.relationships.first)
        #expect(meaningless.name == "meaninglessRelationship")
        #expect(meaningless.destinationEntityName == "EntitySansCustomClass")
        #expect(meaningless.inverseName == nil && meaningless.inverseEntityName == nil)
        #expect(meaningless.minCount == 1 && meaningless.maxCount == 1 && !meaningless.isToMany)
        #expect(meaningless.isIndexed)

        let parent = try #require(model.entity(named: "Parent"))
        #expect(parent.representedClassName == "ParentMO")
        #expect(parent.attributes.count == 13)
        #expect(parent.attributes.allSatisfy { $0.isOptional })
        #expect(parent.attributes.filter(\.isTransient).map(\.name) == ["myInt16Transient"])
        #expect(parent.attributes.first { $0.name == "myInt16Transient" }?.type == .integer16)
        let transformable = try #require(parent.attributes.first { $0.name == "myTransformableSansClassName" })
        #expect(transformable.type == .transformable && transformable.customClassName == nil && transformable.valueTransformerName == nil)
        #expect(parent.relationships.map(\.name) == ["children", "orderedChildren"])
        #expect(parent.relationships.map(\.deleteRule) == [.cascade, .cascade])
        #expect(parent.relationships.map(\.isOrdered) == [false, true])
        #expect(parent.relationships.map(\.isToMany) == [true, true])
        #expect(parent.relationships.map(\.inverseName) == [nil, "parent"])
        #expect(model.attributes(of: "Parent").map(\.name).prefix(3) == ["age", "gender", "humanName"])

        let child = try #require(model.entity(named: "Child"))
        #expect(child.relationships.count == 1)
        #expect(child.relationships[0].destinationEntityName == "Parent")
        #expect(child.relationships[0].inverseName == "orderedChildren")
        #expect(child.relationships[0].minCount == 1)
        #expect(model.attribute(named: "humanName", in: "Child")?.type == .string)

        let uncle = try #require(model.entity(named: "Uncle"))
        #expect(uncle.userInfo == ["mogenerator.ignore": "value"])
        #expect(model.entity(named: "EntitySansCustomClass")?.representedClassName == "NSManagedObject")

        #expect(model.fetchRequestTemplates.map(\.name) == ["allHumans", "byHumanName", "byParent", "byParentName", "oneByHumanName"])
        #expect(model.fetchRequestTemplates.map(\.entityName) == ["Human", "Human", "Child", "Child", "Human"])
        #expect(model.fetchRequestTemplates.map(\.predicate) == [
            nil, "humanName == $humanName", "parent == $parent", "parent.parentName == $parentName", "humanName == $humanName",
        ])
        #expect(model.configurations.isEmpty)

        let diagnostics = model.structuralDiagnostics()
        #expect(diagnostics.allSatisfy { $0.severity == .warning })
        #expect(Set(diagnostics.compactMap { d in d.property.map { "\(d.entity ?? "").\($0)" } })
            == ["Human.meaninglessRelationship", "Parent.children"])
        #expect(diagnostics.first { $0.property == "children" }?.line == 55)
    }

    @Test func momcomModel() throws {
        let model = try ReferenceModels.load("atomicbird_momcom")
        let entity = try #require(model.entity(named: "Entity"))
        #expect(entity.parentName == "AbstractEntity")
        #expect(entity.renamingIdentifier == "myRenamingIdentifier")
        #expect(entity.versionHashModifier == "myVersionHashModifier")
        #expect(entity.userInfo == ["someKey": "randomValue"])
        let byName = Dictionary(uniqueKeysWithValues: entity.attributes.map { ($0.name, $0) })
        let date = try #require(byName["dateAttribute"])
        #expect(date.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 388_411_200)))
        #expect(date.minValue == .date(Date(timeIntervalSinceReferenceDate: 284_000_400)))
        #expect(date.maxValue == .date(Date(timeIntervalSinceReferenceDate: 602_395_200)))
        // 2010-01-01 01:00:00 UTC is Unix time 1262307600.
        #expect(date.minValue == .date(Date(timeIntervalSince1970: 1_262_307_600)))
        #expect(byName["decimalAttribute"]?.minValue == .decimal(try #require(Decimal(string: "-4.5"))))
        #expect(byName["decimalAttribute"]?.maxValue == .decimal(try #require(Decimal(string: "4.5"))))
        #expect(byName["doubleAttribute"]?.minValue == .double(-3.5))
        #expect(byName["floatAttribute"]?.maxValue == .double(2.5))
        #expect(byName["int16Attribute"]?.minValue == .integer(-3))
        #expect(byName["int16Attribute"]?.maxValue == .integer(9))
        #expect(byName["int64Attribute"]?.minValue == .integer(-12))
        #expect(byName["binaryAttribute"]?.isTransient == true)
        #expect(byName["binaryAttribute"]?.userInfo == ["binaryBar": "NO", "binaryBaz": "MAYBE", "binaryFoo": "YES"])
        #expect(byName["transformableAttribute"]?.valueTransformerName == "myValueTransformer")
        #expect(entity.fetchIndexes == [
            FetchIndex(name: "Entity_compound_1", elements: [.init(property: "booleanAttribute"), .init(property: "dateAttribute")]),
            FetchIndex(name: "Entity_compound_2", elements: [.init(property: "decimalAttribute"), .init(property: "doubleAttribute")]),
        ])
        let others = try #require(entity.relationships.first)
        #expect(others.isToMany && others.minCount == 1 && others.maxCount == 9)
        #expect(entity.fetchedProperties.first?.predicate == "booleanAttribute = YES")
        #expect(model.fetchRequestTemplates.map(\.predicate) == Array(repeating: "booleanAttribute == 1 AND floatAttribute > 5", count: 3))
        #expect(model.fetchRequestTemplates.map(\.resultType) == [2, 1, 0])
        #expect(model.fetchRequestTemplates.map(\.fetchLimit) == [0, 0, 100])
        #expect(model.configurations == [ConfigurationDescription(name: "UnrelatedConfiguration", entities: ["UnrelatedEntity"])])
        #expect(model.structuralDiagnostics().isEmpty)
    }

    @Test func coreStoreModels() throws {
        let model = try ReferenceModels.load("JohnEstropia_CoreStore")
        #expect(model.configurations.map(\.name) == ["Config1", "Config2"])
        #expect(model.entityNames(inConfiguration: "Config1") == ["TestEntity1AAA"])
        let unordered = try #require(model.relationship(named: "testToManyUnordered", in: "TestEntity1AAA"))
        #expect(unordered.destinationEntityName == "TestEntity1AAA" && unordered.isToMany && !unordered.isOrdered)
        #expect(model.relationship(named: "testToManyOrdered", in: "TestEntity2")?.isOrdered == true)
        #expect(model.entity(named: "TestEntity1AAA")?.representedClassName == ".TestEntity1")

        let demo = try ReferenceModels.load("JohnEstropia_CoreStore_StackSetupDemo")
        #expect(demo.configurations == [
            ConfigurationDescription(name: "FemaleAccounts", entities: ["FemaleAccount", "UserAccount"]),
            ConfigurationDescription(name: "MaleAccounts", entities: ["MaleAccount", "UserAccount"]),
        ])
        #expect(demo.entity(named: "UserAccount")?.isAbstract == true)
        #expect(demo.attributes(of: "MaleAccount").map(\.name) == ["accountType", "friends", "name"])
        #expect(demo.attribute(named: "friends", in: "FemaleAccount")?.defaultValue == .integer(0))
        #expect(demo.configurations(containing: "UserAccount") == ["FemaleAccounts", "MaleAccounts"])
    }

    // MARK: strata model

    @Test(arguments: ReferenceModels.names)
    func inspectJSONMatchesAnIndependentReading(name: String) throws {
        let url = ReferenceModels.url(name)
        try StrataTool.expectInspectMatchesScan(of: url.path, contentsFile: url)
    }

    @Test func inspectJSONSpotChecks() throws {
        let run = try strata("model", "inspect", ReferenceModels.url("SwiftGen_SwiftGen").path, "--json")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let entities = try #require(root["entities"] as? [[String: Any]])
        let main = try #require(entities.first { $0["name"] as? String == "MainEntity" })
        #expect(main["parent"] is NSNull)
        let attributes = try #require(main["attributes"] as? [[String: Any]])
        let int16 = try #require(attributes.first { $0["name"] as? String == "int16" })
        #expect(int16["type"] as? String == "Integer 16")
        #expect(int16["optional"] as? Bool == false)
        let relationships = try #require(main["relationships"] as? [[String: Any]])
        #expect(relationships.map { $0["deleteRule"] as? String } == ["Nullify", "Nullify", "Nullify"])
        #expect(relationships.map { $0["toMany"] as? Bool } == [true, true, false])
        let child = try #require(entities.first { $0["name"] as? String == "ChildEntity" })
        #expect(child["parent"] as? String == "MainEntity")
        #expect((child["attributes"] as? [[String: Any]])?.count == 3)   // own attributes only

        let mogenerator = try strata("model", "inspect", ReferenceModels.url("rentzsch_mogenerator").path, "--json")
        let moRoot = try #require(try JSONSerialization.jsonObject(with: Data(mogenerator.stdout.utf8)) as? [String: Any])
        #expect((moRoot["configurations"] as? [Any])?.isEmpty == true)
        let parent = try #require((moRoot["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Parent" })
        let children = try #require((parent["relationships"] as? [[String: Any]])?.first)
        #expect(children["inverse"] is NSNull)
        #expect(children["deleteRule"] as? String == "Cascade")
    }

    @Test func inspectPrintsAReadableTree() throws {
        let run = try strata("model", "inspect", ReferenceModels.url("rentzsch_mogenerator").path)
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("Model rentzsch_mogenerator"))
        #expect(run.stdout.contains("\nHuman  class HumanMO\n"))
        #expect(run.stdout.contains("\nParent : Human  class ParentMO\n"))
        #expect(run.stdout.contains("  age: Integer 16  default 0, min 0\n"))
        #expect(run.stdout.contains("  orderedChildren -> [Child]  ordered, inverse parent, Cascade\n"))
        #expect(run.stdout.contains("  byHumanName: Human where humanName == $humanName\n"))
    }

    @Test func inspectAcceptsModelFolders() throws {
        let folder = try ModelFiles.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = try String(contentsOf: ReferenceModels.url("atomicbird_momcom"), encoding: .utf8)
        try ModelFiles.write(text, to: "momcTests.xcdatamodeld/momcTests 2.xcdatamodel/contents", in: folder)
        try ModelFiles.write(ModelFiles.document("<entity name=\"Old\"/>"),
                             to: "momcTests.xcdatamodeld/momcTests.xcdatamodel/contents", in: folder)
        try ModelFiles.write("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>momcTests 2.xcdatamodel</string></dict></plist>
            """, to: "momcTests.xcdatamodeld/.xccurrentversion", in: folder)
        let run = try strata("model", "inspect", folder.appendingPathComponent("momcTests.xcdatamodeld").path, "--json")
        #expect(run.status == 0)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(root["name"] as? String == "momcTests 2")
        #expect((root["entities"] as? [[String: Any]])?.map { $0["name"] as? String } == ["AbstractEntity", "Entity", "OtherEntity", "UnrelatedEntity"])
    }

    @Test(arguments: ReferenceModels.names)
    func validateAcceptsEveryReferenceModel(name: String) throws {
        let model = try ReferenceModels.load(name)
        let run = try strata("model", "validate", ReferenceModels.url(name).path)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("valid: \(model.entities.count) entities"))
        // Warnings (missing inverses in mogenerator) go to stderr, one per line.
        for line in run.stderr.split(separator: "\n") {
            #expect(line.contains(": warning: "))
        }
        if name == "rentzsch_mogenerator" {
            #expect(run.stderr.split(separator: "\n").count == 2)
            #expect(run.stdout == "valid: 9 entities (2 warnings)\n")
        }
    }

    // MARK: Version hashes

    @Test func referenceModelsHashWithoutHanging() throws {
        for name in ReferenceModels.names {
            let first = try ReferenceModels.load(name).entityVersionHashes
            let second = try ReferenceModels.load(name).entityVersionHashes
            #expect(first == second)
            #expect(first.values.allSatisfy { $0.count == 32 })
            #expect(Set(first.values).count == first.count, "\(name): distinct entities share a hash")
        }
        // mogenerator's Parent has a transient attribute: removing it keeps the hash.
        let mogenerator = try ReferenceModels.load("rentzsch_mogenerator")
        var parent = try #require(mogenerator.entity(named: "Parent"))
        parent.attributes.removeAll { $0.isTransient }
        let without = ObjectModel(entities: mogenerator.entities.map { $0.name == "Parent" ? parent : $0 })
        #expect(without.versionHash(ofEntity: "Parent") == mogenerator.versionHash(ofEntity: "Parent"))
    }
}
