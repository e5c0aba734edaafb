import Foundation
import Testing
@testable import StrataModel

@Suite struct ModelValidationTests {
    /// The diagnostics matching severity, entity and property whose message contains `text`.
    private func find(
        _ diagnostics: [ModelDiagnostic],
        _ severity: ModelDiagnostic.Severity = .error,
        entity: String?,
        property: String?,
        _ text: String
    ) -> [ModelDiagnostic] {
        diagnostics.filter {
            $0.severity == severity && $0.entity == entity && $0.property == property && $0.message.contains(text)
        }
    }

    @Test func aSoundModelBuiltInSwiftHasNoDiagnostics() {
        let model = ObjectModel(
            name: "Library",
            entities: [
                EntityDescription(name: "Item", isAbstract: true, attributes: [
                    .attribute("title", .string),
                    .attribute("cached", .integer32, optional: true, transient: true),
                ]),
                EntityDescription(name: "Book", parent: "Item", attributes: [
                    .attribute("isbn", .string),
                    .attribute("rating", .integer16, default: .integer(3)),
                    .derived("titleKey", .string, "canonical:(title)"),
                ], relationships: [
                    .toOne("author", "Author", inverse: "books"),
                    .toMany("tags", "Tag", inverse: "items", ordered: true),
                ], fetchedProperties: [
                    .fetched("sameAuthor", "Book", predicate: "author == $FETCH_SOURCE.author"),
                ], fetchIndexes: [
                    FetchIndex(name: "byIsbn", elements: [.init(property: "isbn")]),
                ], uniquenessConstraints: [["isbn"], ["title", "author"]]),
                EntityDescription(name: "Author", attributes: [.attribute("name", .string)], relationships: [
                    .toMany("books", "Book", inverse: "author", deleteRule: .cascade),
                ]),
                EntityDescription(name: "Tag", relationships: [.toMany("items", "Book", inverse: "tags")]),
            ],
            configurations: [ConfigurationDescription(name: "Cloud", entities: ["Book", "Author", "Tag"])],
            fetchRequestTemplates: [FetchRequestTemplate(name: "byTitle", entity: "Book", predicate: "title == $T")]
        )
        #expect(model.structuralDiagnostics() == [])
    }

    @Test func everyProblemOfABadSwiftModelIsReportedAtOnce() {
        let model = ObjectModel(
            name: "Broken",
            entities: [
                EntityDescription(name: "Base", attributes: [.attribute("id", .integer64)]),
                EntityDescription(name: "Thing", parent: "Base", attributes: [
                    .attribute("id", .integer64),                     // inherited duplicate
                    .attribute("name", .string),
                    .attribute("untyped", .undefined),                // persisted, no type
                    .attribute("", .string),                          // empty name
                    AttributeDescription(name: "bounded", type: .integer16, minValue: .integer(9), maxValue: .integer(1)),
                    AttributeDescription(name: "lazy", type: .string, isDerived: true),
                    AttributeDescription(name: "scratch", type: .string, isTransient: true),
                ], relationships: [
                    .toOne("name", "Owner"),                         // duplicate of attribute + unknown destination
                    .toOne("owner", "Ghost", inverse: "things"),     // unknown destination
                    .toOne("partner", "Partner", inverse: "nothing"), // inverse missing on destination
                    .toOne("wrongWay", "Partner", inverse: "elsewhere"), // inverse points elsewhere
                    .toOne("lonely", "Partner"),                     // no inverse: warning
                    RelationshipDescription(name: "greedy", destination: "Partner", minCount: 2),
                    RelationshipDescription(name: "squeezed", destination: "Partner", toMany: true, minCount: 5, maxCount: 2),
                    .toMany("crowd", "Partner"),
                ], fetchedProperties: [
                    .fetched("phantoms", "Phantom", predicate: "this is not ( a predicate"),
                ], fetchIndexes: [
                    FetchIndex(name: "byNothing", elements: [.init(property: "missing"), .init(property: "crowd")]),
                ], uniquenessConstraints: [["nope"], ["crowd"], ["scratch"]]),
                EntityDescription(name: "Partner", relationships: [
                    .toOne("elsewhere", "Other", inverse: "partners"),
                ]),
                EntityDescription(name: "Other", relationships: [.toMany("partners", "Partner", inverse: "elsewhere")]),
                EntityDescription(name: "Thing"),                      // duplicate entity
                EntityDescription(name: "Orphan", parent: "Missing"),
                EntityDescription(name: "Loop1", parent: "Loop2"),
                EntityDescription(name: "Loop2", parent: "Loop1"),
                EntityDescription(name: "Picture", attributes: [
                    AttributeDescription(name: "image", type: .transformable, valueTransformerName: "NoSuchTransformer"),
                ]),
            ],
            configurations: [
                ConfigurationDescription(name: "Local", entities: ["Thing", "Nowhere"]),
                ConfigurationDescription(name: "Local", entities: ["Partner"]),
            ],
            fetchRequestTemplates: [FetchRequestTemplate(name: "all", entity: "Unicorn")]
        )
        let d = model.structuralDiagnostics()

        #expect(find(d, entity: "Thing", property: "id", "already declared by ancestor entity 'Base'").count == 1)
        #expect(find(d, entity: "Thing", property: "untyped", "no type").count == 1)
        #expect(find(d, entity: "Thing", property: nil, "an attribute has an empty name").count == 1)
        #expect(find(d, entity: "Thing", property: "bounded", "minimum 9 is greater than maximum 1").count == 1)
        #expect(find(d, entity: "Thing", property: "lazy", "no derivation expression").count == 1)
        #expect(find(d, entity: "Thing", property: "name", "duplicate property name 'name' (attribute and relationship)").count == 1)
        #expect(find(d, entity: "Thing", property: "name", "destination entity 'Owner' does not exist").count == 1)
        #expect(find(d, entity: "Thing", property: "owner", "destination entity 'Ghost' does not exist").count == 1)
        #expect(find(d, entity: "Thing", property: "partner", "inverse relationship 'nothing' does not exist on 'Partner'").count == 1)
        #expect(find(d, entity: "Thing", property: "wrongWay", "does not point back: its destination is 'Other'").count == 1)
        #expect(find(d, .warning, entity: "Thing", property: "lonely", "no inverse").count == 1)
        #expect(find(d, entity: "Thing", property: "lonely", "").isEmpty)   // a warning, not an error
        #expect(find(d, entity: "Thing", property: "greedy", "to-one relationship has minCount 2").count == 1)
        #expect(find(d, entity: "Thing", property: "squeezed", "minCount 5 is greater than maxCount 2").count == 1)
        #expect(find(d, entity: "Thing", property: "phantoms", "target entity 'Phantom' does not exist").count == 1)
        #expect(find(d, entity: "Thing", property: "missing", "fetch index 'byNothing' names unknown property").count == 1)
        #expect(find(d, entity: "Thing", property: "crowd", "fetch index 'byNothing' names to-many relationship").count == 1)
        #expect(find(d, entity: "Thing", property: "nope", "uniqueness constraint names unknown property").count == 1)
        #expect(find(d, entity: "Thing", property: "crowd", "uniqueness constraint names to-many relationship").count == 1)
        #expect(find(d, entity: "Thing", property: "scratch", "uniqueness constraint names transient attribute").count == 1)
        #expect(find(d, entity: "Thing", property: nil, "duplicate entity name 'Thing'").count == 1)
        #expect(find(d, entity: "Orphan", property: nil, "parent entity 'Missing' does not exist").count == 1)
        #expect(find(d, entity: "Loop1", property: nil, "inheritance cycle: Loop1 → Loop2 → Loop1").count == 1)
        #expect(find(d, entity: "Loop2", property: nil, "inheritance cycle").isEmpty)   // one report per cycle
        #expect(find(d, entity: nil, property: "Nowhere", "configuration 'Local' lists unknown entity 'Nowhere'").count == 1)
        #expect(find(d, entity: nil, property: nil, "duplicate configuration name 'Local'").count == 1)
        #expect(find(d, entity: nil, property: "all", "unknown entity 'Unicorn'").count == 1)
        // Not this layer's business: predicate syntax and value transformers.
        #expect(!d.contains { $0.property == "phantoms" && $0.message.contains("predicate") })
        #expect(!d.contains { $0.entity == "Picture" })
        // Partner/Other are consistent with each other.
        #expect(!d.contains { $0.entity == "Partner" || $0.entity == "Other" })
        #expect(d.filter { $0.severity == .error }.count == 24, "\(d.map(\.description).joined(separator: "\n"))")
        #expect(d.allSatisfy { $0.file == nil && $0.line == nil })
    }

    @Test func inversesThatDoNotPointBack() {
        let model = ObjectModel(entities: [
            EntityDescription(name: "A", relationships: [
                .toOne("b", "B", inverse: "as"),
                .toOne("b2", "B", inverse: "as"),          // B.as points back to A.b, not A.b2
            ]),
            EntityDescription(name: "B", relationships: [
                .toMany("as", "A", inverse: "b"),
                .toMany("c", "C", inverse: "b"),          // C.b has no inverse declared
            ]),
            EntityDescription(name: "C", relationships: [.toOne("b", "B")]),
        ])
        let d = model.structuralDiagnostics()
        #expect(find(d, entity: "A", property: "b", "").isEmpty)
        #expect(find(d, entity: "A", property: "b2", "does not point back: its inverse is 'b', not 'b2'").count == 1)
        #expect(find(d, entity: "B", property: "c", "does not point back: it has no inverse").count == 1)
        #expect(find(d, .warning, entity: "C", property: "b", "no inverse").count == 1)
    }

    @Test func propertiesClashAcrossSeveralAncestorsAndKinds() {
        let model = ObjectModel(entities: [
            EntityDescription(name: "Root", relationships: [.toOne("shared", "Root", inverse: "shared")]),
            EntityDescription(name: "Middle", parent: "Root", fetchedProperties: [.fetched("peers", "Middle")]),
            EntityDescription(name: "Leaf", parent: "Middle", attributes: [
                .attribute("shared", .string),
                .attribute("peers", .string),
                .attribute("fine", .string),
            ], fetchedProperties: [.fetched("fine", "Leaf")]),
        ])
        let d = model.structuralDiagnostics()
        #expect(find(d, entity: "Leaf", property: "shared", "attribute 'shared' is already declared by ancestor entity 'Root'").count == 1)
        #expect(find(d, entity: "Leaf", property: "peers", "already declared by ancestor entity 'Middle'").count == 1)
        #expect(find(d, entity: "Leaf", property: "fine", "duplicate property name 'fine' (attribute and fetched property)").count == 1)
        #expect(d.filter { $0.severity == .error }.count == 3)
    }

    @Test func countsOnToOneAndToMany() {
        let model = ObjectModel(entities: [
            EntityDescription(name: "A", relationships: [
                RelationshipDescription(name: "ok", destination: "A", inverse: "ok", minCount: 1, maxCount: 1),
                RelationshipDescription(name: "wide", destination: "A", inverse: "wide", maxCount: 3),
                RelationshipDescription(name: "range", destination: "A", inverse: "range", toMany: true, minCount: 2, maxCount: 9),
                RelationshipDescription(name: "unbounded", destination: "A", inverse: "unbounded", toMany: true, minCount: 4),
            ]),
        ])
        let d = model.structuralDiagnostics()
        // Self-inverse relationships with the wrong cardinality are not this check's concern.
        #expect(find(d, entity: "A", property: "wide", "to-one relationship has maxCount 3").count == 1)
        #expect(find(d, entity: "A", property: "ok", "").isEmpty)
        #expect(find(d, entity: "A", property: "range", "").isEmpty)
        #expect(find(d, entity: "A", property: "unbounded", "").isEmpty)
    }

    @Test func xmlModelProblemsCarryFileAndLine() throws {
        let xml = ModelFiles.document("""
            <entity name="Shelf">
                <attribute name="label" attributeType="String"/>
                <relationship name="books" toMany="YES" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/>
                <relationship name="owner" maxCount="1" destinationEntity="Person" inverseName="shelves" inverseEntity="Person"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="labels"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Book">
                <attribute name="title" attributeType="String"/>
                <attribute name="title" attributeType="Integer 16"/>
                <relationship name="shelf" maxCount="1" destinationEntity="Shelf"/>
                <fetchIndex name="byAuthor">
                    <fetchIndexElement property="author" type="Binary" order="ascending"/>
                </fetchIndex>
            </entity>
            <entity name="Shelf"/>
            <fetchRequest name="lost" entity="Nothing"/>
            <configuration name="Main">
                <memberEntity name="Shelf"/>
                <memberEntity name="Ghost"/>
            </configuration>
            """)
        let model = try XcodeModelLoader.load(data: Data(xml.utf8), fileName: "/models/Library.xcdatamodel/contents")
        let d = model.structuralDiagnostics()
        #expect(d.allSatisfy { $0.file == "/models/Library.xcdatamodel/contents" })
        func line(_ entity: String?, _ property: String?, _ text: String, _ severity: ModelDiagnostic.Severity = .error) -> Int? {
            find(d, severity, entity: entity, property: property, text).first?.line
        }
        #expect(line("Shelf", "owner", "destination entity 'Person' does not exist") == 6)
        #expect(line("Shelf", "labels", "uniqueness constraint names unknown property") == 8)
        #expect(line("Book", "title", "duplicate property name 'title' (attributes)") == 15)
        #expect(line("Book", "shelf", "does not point back: it has no inverse, not 'books'") == nil)
        #expect(line("Shelf", "books", "does not point back: it has no inverse, not 'books'") == 5)
        #expect(line("Book", "shelf", "no inverse", .warning) == 16)
        #expect(line("Book", "author", "fetch index 'byAuthor' names unknown property") == 17)
        #expect(line("Shelf", nil, "duplicate entity name 'Shelf' (first declared at line 3)") == 21)
        #expect(line(nil, "lost", "unknown entity 'Nothing'") == 22)
        #expect(line(nil, "Ghost", "lists unknown entity 'Ghost'") == 23)
        #expect(d.first.map(\.description)?.hasPrefix("/models/Library.xcdatamodel/contents:") == true)
        #expect(d.contains { $0.description == "/models/Library.xcdatamodel/contents:6: error: Shelf.owner: destination entity 'Person' does not exist" })
    }

    @Test func loadDiagnosticsComeFirst() throws {
        let xml = ModelFiles.document("""
            <entity name="A">
                <attribute name="n" attributeType="Integer 8"/>
                <relationship name="r" maxCount="1" destinationEntity="Z"/>
            </entity>
            """)
        let model = try XcodeModelLoader.load(data: Data(xml.utf8), fileName: "a.xml")
        let d = model.structuralDiagnostics()
        #expect(d.first?.message == "unknown attribute type 'Integer 8'")
        #expect(d.count == 3)   // unknown type, unknown destination, no inverse
    }
}
