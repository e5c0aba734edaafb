import Foundation
import Testing
@testable import StrataModel

@Suite struct XcodeModelLoaderTests {
    // MARK: Reference models

    @Test(arguments: ReferenceModels.names)
    func loadsEveryReferenceModelLikeAnIndependentScan(name: String) throws {
        let url = ReferenceModels.url(name)
        let model = try XcodeModelLoader.load(contentsOf: url)
        let scan = ContentsScanner(text: try String(contentsOf: url, encoding: .utf8))

        #expect(model.name == name)
        #expect(model.sourceFile == url.path)
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
        // Real models have no structural errors (warnings for missing inverses are fine).
        let errors = model.structuralDiagnostics().filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(errors)")
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
        #expect(byName["decimal"]?.defaultValue == .decimal(Decimal(string: "0.0")!))
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
        #expect(byName["decimalAttribute"]?.minValue == .decimal(Decimal(string: "-4.5")!))
        #expect(byName["decimalAttribute"]?.maxValue == .decimal(Decimal(string: "4.5")!))
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

    // MARK: Folders

    private static let versionOne = ReferenceModels.document("""
        <entity name="Old" representedClassName="Old"/>
        """)
    private static let versionTwo = ReferenceModels.document("""
        <entity name="New" representedClassName="New">
            <attribute name="title" attributeType="String"/>
        </entity>
        """)

    @Test func xcdatamodeldUsesCurrentVersionFromPlist() throws {
        let folder = try ReferenceModels.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ReferenceModels.write(Self.versionOne, to: "Books.xcdatamodeld/Books.xcdatamodel/contents", in: folder)
        let current = try ReferenceModels.write(Self.versionTwo, to: "Books.xcdatamodeld/Books 2.xcdatamodel/contents", in: folder)
        try ReferenceModels.write("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>_XCCurrentVersionName</key>
            \t<string>Books 2.xcdatamodel</string>
            </dict>
            </plist>
            """, to: "Books.xcdatamodeld/.xccurrentversion", in: folder)

        let model = try XcodeModelLoader.load(contentsOf: folder.appendingPathComponent("Books.xcdatamodeld"))
        #expect(model.name == "Books 2")
        #expect(model.entities.map(\.name) == ["New"])
        #expect(model.sourceFile == current.path)
        #expect(model.line(entity: "New") == 3)
        #expect(model.line(entity: "New", property: "title") == 4)

        // The version folder itself, and its contents file, load the same model.
        let direct = try XcodeModelLoader.load(contentsOf: folder.appendingPathComponent("Books.xcdatamodeld/Books 2.xcdatamodel"))
        #expect(direct.entities == model.entities && direct.name == "Books 2")
        let file = try XcodeModelLoader.load(contentsOf: current)
        #expect(file.entities == model.entities && file.name == "Books 2")
    }

    @Test func xcdatamodeldWithOneVersionNeedsNoPlist() throws {
        let folder = try ReferenceModels.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ReferenceModels.write(Self.versionOne, to: "Only.xcdatamodeld/First.xcdatamodel/contents", in: folder)
        let model = try XcodeModelLoader.load(contentsOf: folder.appendingPathComponent("Only.xcdatamodeld"))
        #expect(model.name == "First")
        #expect(model.entities.map(\.name) == ["Old"])
    }

    @Test func xcdatamodeldWithSeveralVersionsAndNoPlistNamesThem() throws {
        let folder = try ReferenceModels.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ReferenceModels.write(Self.versionOne, to: "Two.xcdatamodeld/A.xcdatamodel/contents", in: folder)
        try ReferenceModels.write(Self.versionTwo, to: "Two.xcdatamodeld/B.xcdatamodel/contents", in: folder)
        let error = try #require(throws: StrataError.self) {
            try XcodeModelLoader.load(contentsOf: folder.appendingPathComponent("Two.xcdatamodeld"))
        }
        #expect(error.code == .modelUnreadable)
        #expect(error.message.contains("A.xcdatamodel") && error.message.contains("B.xcdatamodel"))
        #expect(error.message.contains("Two.xcdatamodeld"))
    }

    @Test func plistNamingAMissingVersionIsAnError() throws {
        let folder = try ReferenceModels.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ReferenceModels.write(Self.versionOne, to: "M.xcdatamodeld/A.xcdatamodel/contents", in: folder)
        try ReferenceModels.write("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Gone.xcdatamodel</string></dict></plist>
            """, to: "M.xcdatamodeld/.xccurrentversion", in: folder)
        let error = try #require(throws: StrataError.self) {
            try XcodeModelLoader.load(contentsOf: folder.appendingPathComponent("M.xcdatamodeld"))
        }
        #expect(error.code == .modelUnreadable)
        #expect(error.message.contains("Gone.xcdatamodel"))
    }

    @Test func emptyFoldersAndMissingPathsAreUnreadable() throws {
        let folder = try ReferenceModels.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Empty.xcdatamodeld"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Empty.xcdatamodel"), withIntermediateDirectories: true)
        for path in ["Empty.xcdatamodeld", "Empty.xcdatamodel", "missing.xcdatamodeld", "missing-file"] {
            let error = try #require(throws: StrataError.self) {
                try XcodeModelLoader.load(contentsOf: folder.appendingPathComponent(path))
            }
            #expect(error.code == .modelUnreadable)
            #expect(error.message.contains(path))
        }
    }

    @Test func bareContentsFileOfAnyNameAndData() throws {
        let folder = try ReferenceModels.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try ReferenceModels.write(Self.versionTwo, to: "whatever.xml", in: folder)
        let model = try XcodeModelLoader.load(contentsOf: file)
        #expect(model.name == "whatever")
        #expect(model.sourceFile == file.path)

        let fromData = try XcodeModelLoader.load(data: Data(Self.versionTwo.utf8), fileName: "Shelf.xcdatamodel/contents")
        #expect(fromData.name == "Shelf")
        #expect(fromData.sourceFile == "Shelf.xcdatamodel/contents")
        #expect(try XcodeModelLoader.load(data: Data(Self.versionTwo.utf8), fileName: "contents").name == "contents")
    }

    // MARK: Values

    @Test func typedDefaultsAndBounds() throws {
        let xml = ReferenceModels.document("""
            <entity name="T">
                <attribute name="i16" attributeType="Integer 16" defaultValueString="-7" minValueString="-10" maxValueString="10"/>
                <attribute name="i64" attributeType="Integer 64" defaultValueString="9223372036854775807"/>
                <attribute name="dec" attributeType="Decimal" defaultValueString="0.1" minValueString="-1e2"/>
                <attribute name="dbl" attributeType="Double" defaultValueString="2.5e3"/>
                <attribute name="flt" attributeType="Float" defaultValueString="0.25"/>
                <attribute name="yes" attributeType="Boolean" defaultValueString="YES"/>
                <attribute name="no" attributeType="Boolean" defaultValueString="false"/>
                <attribute name="one" attributeType="Boolean" defaultValueString="1"/>
                <attribute name="when" attributeType="Date" defaultDateTimeInterval="0" defaultValueString="2001-01-01 00:00:00 +0000"/>
                <attribute name="text" attributeType="String" defaultValueString="  hi  " minValueString="1" maxValueString="40" regularExpressionString="[a-z ]+"/>
                <attribute name="id" attributeType="UUID" defaultValueString="E621E1F8-C36C-495A-93FC-0C247A3E6E5F"/>
                <attribute name="link" attributeType="URI" defaultValueString="https://example.com/a"/>
                <attribute name="blob" attributeType="Binary" allowsExternalBinaryDataStorage="YES" preserveAfterDeletion="YES" indexed="YES" versionHashModifier="v2" elementID="oldBlob"/>
            </entity>
            """)
        let model = try XcodeModelLoader.load(data: Data(xml.utf8), fileName: "T.xml")
        let a = Dictionary(uniqueKeysWithValues: try #require(model.entity(named: "T")).attributes.map { ($0.name, $0) })
        #expect(a["i16"]?.defaultValue == .integer(-7))
        #expect(a["i16"]?.minValue == .integer(-10) && a["i16"]?.maxValue == .integer(10))
        #expect(a["i64"]?.defaultValue == .integer(Int64.max))
        #expect(a["dec"]?.defaultValue == .decimal(Decimal(string: "0.1")!))
        #expect(a["dec"]?.minValue == .decimal(Decimal(-100)))
        #expect(a["dbl"]?.defaultValue == .double(2500))
        #expect(a["flt"]?.defaultValue == .double(0.25))
        #expect(a["yes"]?.defaultValue == .boolean(true))
        #expect(a["no"]?.defaultValue == .boolean(false))
        #expect(a["one"]?.defaultValue == .boolean(true))
        #expect(a["when"]?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(a["text"]?.defaultValue == .string("  hi  "))
        #expect(a["text"]?.minValue == .integer(1) && a["text"]?.maxValue == .integer(40))
        #expect(a["text"]?.regularExpression == "[a-z ]+")
        #expect(a["id"]?.defaultValue == .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!))
        #expect(a["link"]?.defaultValue == .uri("https://example.com/a"))
        let blob = try #require(a["blob"])
        #expect(blob.allowsExternalBinaryDataStorage && blob.preserveAfterDeletion && blob.isIndexed)
        #expect(blob.versionHashModifier == "v2" && blob.renamingIdentifier == "oldBlob")
        #expect(blob.isOptional == false)
        #expect(model.loadDiagnostics.isEmpty)
    }

    @Test func valuesThatDoNotParseAreKeptNullAndReported() throws {
        let xml = ReferenceModels.document("""
            <entity name="Bad">
                <attribute name="small" attributeType="Integer 16" defaultValueString="40000"/>
                <attribute name="word" attributeType="Integer 32" minValueString="ten"/>
                <attribute name="money" attributeType="Decimal" defaultValueString="1.2.3"/>
                <attribute name="flag" attributeType="Boolean" defaultValueString="maybe"/>
                <attribute name="when" attributeType="Date" defaultDateTimeInterval="soon"/>
                <attribute name="len" attributeType="String" maxValueString="-1"/>
                <attribute name="id" attributeType="UUID" defaultValueString="not-a-uuid"/>
                <attribute name="kind" attributeType="Colour"/>
                <relationship name="link" destinationEntity="Bad" inverseName="link" inverseEntity="Bad" maxCount="1" deletionRule="Explode" minCount="lots"/>
            </entity>
            """)
        let model = try XcodeModelLoader.load(data: Data(xml.utf8), fileName: "bad.xml")
        let entity = try #require(model.entity(named: "Bad"))
        #expect(entity.attributes.allSatisfy { $0.defaultValue == .null && $0.minValue == .null && $0.maxValue == .null })
        #expect(entity.attributes.last?.type == .undefined)
        #expect(entity.relationships.first?.deleteRule == .nullify)

        let diagnostics = model.structuralDiagnostics()
        let errors = diagnostics.filter { $0.severity == .error }
        for property in ["small", "word", "money", "flag", "when", "len", "id", "kind", "link"] {
            #expect(errors.contains { $0.entity == "Bad" && $0.property == property && $0.file == "bad.xml" && $0.line != nil },
                    "no error for \(property)")
        }
        #expect(errors.contains { $0.property == "kind" && $0.message.contains("Colour") })
        #expect(errors.contains { $0.property == "link" && $0.message.contains("Explode") })
        // The unknown type is reported once, not again as "untyped".
        #expect(errors.filter { $0.property == "kind" }.count == 1)
        #expect(model.line(entity: "Bad", property: "kind") == 11)
        #expect(errors.first { $0.property == "kind" }?.line == 11)
    }

    @Test func relationshipDefaultsAndDeleteRules() throws {
        let xml = ReferenceModels.document("""
            <entity name="A">
                <relationship name="one" maxCount="1" destinationEntity="B" inverseName="many" inverseEntity="B"/>
                <relationship name="two" toMany="YES" optional="YES" deletionRule="Cascade" destinationEntity="B" inverseName="back" inverseEntity="B"/>
                <relationship name="three" toMany="YES" deletionRule="Deny" destinationEntity="B" transient="YES" minCount="2"/>
                <relationship name="four" deletionRule="No Action" destinationEntity="B"/>
            </entity>
            <entity name="B">
                <relationship name="many" toMany="YES" deletionRule="Nullify" destinationEntity="A" inverseName="one" inverseEntity="A"/>
                <relationship name="back" maxCount="1" destinationEntity="A" inverseName="two" inverseEntity="A"/>
            </entity>
            """)
        let model = try XcodeModelLoader.load(data: Data(xml.utf8), fileName: "r.xml")
        let r = try #require(model.entity(named: "A")).relationships
        #expect(r.map(\.deleteRule) == [.nullify, .cascade, .deny, .noAction])
        #expect(r.map(\.isToMany) == [false, true, true, false])
        #expect(r.map(\.maxCount) == [1, 0, 0, 1])
        #expect(r.map(\.minCount) == [0, 0, 2, 0])
        #expect(r.map(\.isOptional) == [false, true, false, false])
        #expect(r.map(\.isTransient) == [false, false, true, false])
        #expect(model.loadDiagnostics.isEmpty)
    }

    @Test func entityReferencesAreDecodedAndUnknownThingsIgnored() throws {
        let xml = ReferenceModels.document("""
            <futureElement name="ignored"><nested/></futureElement>
            <entity name="Note" someNewFlag="YES" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String" spotlightIndexingEnabled="YES"/>
                <attribute name="score" attributeType="Integer 32"/>
                <gizmo/>
                <fetchedProperty name="similar">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Note" predicateString="title BEGINSWITH &quot;a&quot; AND score &gt; 3 &amp;&amp; score &lt; 9"/>
                </fetchedProperty>
                <fetchedProperty name="everything">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Note"/>
                </fetchedProperty>
            </entity>
            <fetchRequest name="top" entity="Note" predicateString="score &gt;= $MIN" fetchLimit="5"/>
            <elements><element name="Note" positionX="1" positionY="2" width="3" height="4"/></elements>
            """)
        let model = try XcodeModelLoader.load(data: Data(xml.utf8), fileName: "n.xml")
        #expect(model.entities.count == 1)
        let note = try #require(model.entity(named: "Note"))
        #expect(note.attributes.map(\.name) == ["title", "score"])
        #expect(note.fetchedProperties.map(\.predicate) == ["title BEGINSWITH \"a\" AND score > 3 && score < 9", nil])
        #expect(model.fetchRequestTemplates == [FetchRequestTemplate(name: "top", entity: "Note", predicate: "score >= $MIN", fetchLimit: 5)])
        #expect(model.line(key: "fetchRequest:top") == 15)
        #expect(model.structuralDiagnostics().isEmpty)
    }

    @Test func missingNamesLoadAndAreReportedByValidation() throws {
        let xml = ReferenceModels.document("""
            <entity>
                <attribute attributeType="String"/>
                <relationship toMany="YES"/>
            </entity>
            <configuration><memberEntity/></configuration>
            <fetchRequest/>
            """)
        let model = try XcodeModelLoader.load(data: Data(xml.utf8), fileName: "nameless.xml")
        #expect(model.entities.map(\.name) == [""])
        let messages = model.structuralDiagnostics().filter { $0.severity == .error }.map(\.message)
        #expect(messages.contains("an entity has an empty name"))
        #expect(messages.contains("an attribute has an empty name"))
        #expect(messages.contains("a relationship has an empty name"))
        #expect(messages.contains("relationship has no destination entity"))
        #expect(messages.contains("a configuration has an empty name"))
        #expect(messages.contains("a fetch request template has an empty name"))
        #expect(messages.contains("fetch request template has no entity"))
    }

    // MARK: Garbage

    @Test func garbageIsUnreadableNotACrash() throws {
        let cases: [(String, Data)] = [
            ("empty.xml", Data()),
            ("text.xml", Data("hello, world".utf8)),
            ("html.xml", Data("<html><body>hi</body></html>".utf8)),
            ("open.xml", Data("<model><entity name=\"A\">".utf8)),
            ("nul.xml", Data([0, 0, 0, 0])),
            ("bom.xml", Data([0xEF, 0xBB, 0xBF])),
            ("mismatch.xml", Data("<model><entity></model>".utf8)),
        ]
        for (name, data) in cases {
            let error = try #require(throws: StrataError.self, "\(name)") {
                try XcodeModelLoader.load(data: data, fileName: name)
            }
            #expect(error.code == .modelUnreadable)
            #expect(error.message.hasPrefix(name))
        }
        let html = try #require(throws: StrataError.self) {
            try XcodeModelLoader.load(data: Data("<html/>".utf8), fileName: "page.html")
        }
        #expect(html.message.contains("<html>"))
        let unterminated = try #require(throws: StrataError.self) {
            try XcodeModelLoader.load(data: Data("<model>\n<entity name=\"A\" \n".utf8), fileName: "cut.xml")
        }
        #expect(unterminated.message.hasPrefix("cut.xml:"))
        #expect(unterminated.message.contains("XML"))
    }

    @Test func invalidUTF8IsRefusedBeforeParsing() throws {
        #expect(XMLTreeBuilder.firstInvalidUTF8Offset(in: Data("plain <é> € 𝄞".utf8)) == nil)
        #expect(XMLTreeBuilder.firstInvalidUTF8Offset(in: Data([0x41, 0xFF])) == 1)
        #expect(XMLTreeBuilder.firstInvalidUTF8Offset(in: Data([0xC0, 0x80])) == 0)         // overlong
        #expect(XMLTreeBuilder.firstInvalidUTF8Offset(in: Data([0xED, 0xA0, 0x80])) == 0)   // surrogate
        #expect(XMLTreeBuilder.firstInvalidUTF8Offset(in: Data([0xF4, 0x90, 0x80, 0x80])) == 0)
        #expect(XMLTreeBuilder.firstInvalidUTF8Offset(in: Data([0x41, 0xE2, 0x82])) == 1)   // truncated
        var bytes = Array(ReferenceModels.document(#"<entity name="A"><attribute name="x" attributeType="String"/></entity>"#).utf8)
        // Corrupt an attribute name: FoundationXML would crash on this.
        let attributeType = Array("attributeType".utf8)
        let start = try #require((0..<bytes.count).first { bytes[$0...].starts(with: attributeType) })
        bytes[start + 2] = 0xFF
        let error = try #require(throws: StrataError.self) {
            try XcodeModelLoader.load(data: Data(bytes), fileName: "latin.xml")
        }
        #expect(error.code == .modelUnreadable)
        #expect(error.message.hasPrefix("latin.xml:3:"))
        #expect(error.message.contains("not UTF-8"))
    }

    @Test func truncatedReferenceFilesNeverCrash() throws {
        let data = try Data(contentsOf: ReferenceModels.url("SwiftGen_SwiftGen"))
        var loaded = 0
        for length in stride(from: 0, to: data.count, by: 61) {
            do {
                _ = try XcodeModelLoader.load(data: data.prefix(length), fileName: "cut.contents")
                loaded += 1
            } catch let error as StrataError {
                #expect(error.code == .modelUnreadable)
            }
        }
        #expect(loaded == 0)   // every prefix misses </model>
        #expect(try XcodeModelLoader.load(data: data, fileName: "whole.contents").entities.count == 8)
    }

    @Test func randomBytesAndMutationsNeverCrash() throws {
        var generator = SplitMix64(seed: 0x5742_4154_41)
        let original = [UInt8](try Data(contentsOf: ReferenceModels.url("atomicbird_momcom")))
        for round in 0..<300 {
            var bytes: [UInt8]
            if round < 40 {
                bytes = (0..<Int(generator.next() % 512)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            } else {
                bytes = original
                for _ in 0..<(1 + Int(generator.next() % 8)) {
                    let at = Int(generator.next() % UInt64(bytes.count))
                    let replacements: [[UInt8]] = [
                        Array("<".utf8), Array(">".utf8), Array("\"".utf8), Array("x".utf8), Array(" ".utf8),
                        Array("&".utf8), Array("=".utf8), Array("/".utf8), Array("é".utf8), Array("€".utf8),
                        [0xFF], [0xC3], [0x00], Array("<!--".utf8), Array("&#0;".utf8), Array("<![CDATA[".utf8),
                    ]
                    bytes.replaceSubrange(at...at, with: replacements[Int(generator.next() % UInt64(replacements.count))])
                }
            }
            do {
                let model = try XcodeModelLoader.load(data: Data(bytes), fileName: "fuzz-\(round).xml")
                _ = model.structuralDiagnostics()
                _ = model.entityVersionHashes
            } catch let error as StrataError {
                #expect(error.code == .modelUnreadable)
            }
        }
    }
}
