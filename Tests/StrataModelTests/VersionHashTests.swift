import Foundation
import Testing
@testable import StrataModel

@Suite struct VersionHashTests {
    /// Pinned hashes: the encoding is part of the store format; changing it must be deliberate.
    private static let pinnedTagHash = "4d6444cda6565f479a8e5d2fbab91e23b9a3fe9c63d4f25a07baf86fb2d720d0"
    private static let pinnedBookHash = "3ddea1e5a47b475dbe64d9e7e750aca153c136d19f1f63a33cfba0a7797ea08d"

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    // MARK: Entity hashes

    private static let book = EntityDescription(
        name: "Book",
        attributes: [
            .attribute("title", .string),
            .attribute("pages", .integer32, optional: true),
            .attribute("scratch", .string, optional: true, transient: true),
        ],
        relationships: [
            .toOne("author", "Author", inverse: "books"),
            .toMany("tags", "Tag", ordered: true),
        ],
        fetchedProperties: [.fetched("sameAuthor", "Book", predicate: "author == $FETCH_SOURCE.author")]
    )
    private static let author = EntityDescription(name: "Author", attributes: [.attribute("name", .string)],
                                                  relationships: [.toMany("books", "Book", inverse: "author")])
    private static let tag = EntityDescription(name: "Tag")

    private func model(book: EntityDescription = book, author: EntityDescription = author, extra: [EntityDescription] = []) -> ObjectModel {
        ObjectModel(entities: [book, author, Self.tag] + extra)
    }

    private func bookHash(_ change: (inout EntityDescription) -> Void) -> [UInt8] {
        var entity = Self.book
        change(&entity)
        return model(book: entity).versionHash(ofEntity: "Book")
    }

    @Test func hashIs32StableBytesAndPinned() {
        let first = model().versionHash(ofEntity: "Book")
        #expect(first.count == 32)
        #expect(model().versionHash(ofEntity: "Book") == first)
        #expect(model().entityVersionHashes == ["Book": first, "Author": model().versionHash(ofEntity: "Author"),
                                               "Tag": model().versionHash(ofEntity: "Tag")])
        #expect(model().versionHash(ofEntity: "Nope") == [])
        // Pinned: the encoding is part of the store format; changing it must be deliberate.
        #expect(hex(ObjectModel(entities: [Self.tag]).versionHash(ofEntity: "Tag")) == Self.pinnedTagHash)
        #expect(hex(first) == Self.pinnedBookHash)
    }

    @Test func declarationOrderDoesNotMatter() {
        let reordered = bookHash {
            $0.attributes.reverse()
            $0.relationships.reverse()
        }
        #expect(reordered == model().versionHash(ofEntity: "Book"))
        let shuffledModel = ObjectModel(entities: [Self.tag, Self.author, Self.book])
        #expect(shuffledModel.entityVersionHashes == model().entityVersionHashes)
    }

    @Test func persistedShapeChangesChangeTheHash() {
        let base = model().versionHash(ofEntity: "Book")
        let changes: [(String, (inout EntityDescription) -> Void)] = [
            ("add attribute", { $0.attributes.append(.attribute("isbn", .string)) }),
            ("remove attribute", { $0.attributes.removeFirst() }),
            ("retype attribute", { $0.attributes[1].type = .integer64 }),
            ("rename attribute", { $0.attributes[0].name = "name" }),
            ("optional flag", { $0.attributes[0].isOptional = true }),
            ("attribute version hash modifier", { $0.attributes[0].versionHashModifier = "2" }),
            ("transient becomes persisted", { $0.attributes[2].isTransient = false }),
            ("add relationship", { $0.relationships.append(.toOne("editor", "Author")) }),
            ("remove relationship", { $0.relationships.removeLast() }),
            ("relationship destination", { $0.relationships[1].destinationEntityName = "Author" }),
            ("to-one becomes to-many", { $0.relationships[0].isToMany = true }),
            ("ordered flag", { $0.relationships[1].isOrdered = false }),
            ("inverse", { $0.relationships[1].inverseName = "books" }),
            ("minCount", { $0.relationships[1].minCount = 1 }),
            ("maxCount", { $0.relationships[1].maxCount = 10 }),
            ("abstract", { $0.isAbstract = true }),
            ("parent", { $0.parentName = "Tag" }),
            ("entity version hash modifier", { $0.versionHashModifier = "v2" }),
            ("entity name", { $0.name = "Volume" }),
        ]
        var seen: Set<[UInt8]> = [base]
        for (label, change) in changes {
            var entity = Self.book
            change(&entity)
            let hash = model(book: entity).versionHash(ofEntity: entity.name)
            #expect(hash != base, "\(label)")
            #expect(hash.count == 32, "\(label)")
            seen.insert(hash)
        }
        #expect(seen.count == changes.count + 1)   // every change gives a distinct hash
    }

    @Test func nonPersistedDetailsDoNotChangeTheHash() {
        let base = model().versionHash(ofEntity: "Book")
        let changes: [(String, (inout EntityDescription) -> Void)] = [
            ("add transient attribute", { $0.attributes.append(.attribute("cache", .binary, transient: true)) }),
            ("retype transient attribute", { $0.attributes[2].type = .integer16 }),
            ("add transient relationship", {
                $0.relationships.append(RelationshipDescription(name: "view", destination: "Tag", transient: true))
            }),
            ("user info", { $0.userInfo = ["k": "v"]; $0.attributes[0].userInfo = ["k": "v"] }),
            ("default value", { $0.attributes[0].defaultValue = .string("Untitled") }),
            ("bounds", { $0.attributes[1].minValue = .integer(1); $0.attributes[1].maxValue = .integer(9000) }),
            ("regular expression", { $0.attributes[0].regularExpression = "[A-Z].*" }),
            ("fetched properties", { $0.fetchedProperties = [] }),
            ("fetch index", { $0.fetchIndexes = [FetchIndex(name: "byTitle", elements: [.init(property: "title")])] }),
            ("uniqueness constraint", { $0.uniquenessConstraints = [["title"]] }),
            ("delete rule", { $0.relationships[0].deleteRule = .cascade }),
            ("class name", { $0.representedClassName = "BookMO" }),
            ("renaming identifier", { $0.renamingIdentifier = "OldBook"; $0.attributes[0].renamingIdentifier = "name" }),
            ("derivation", { $0.attributes[0].derivationExpression = "uppercase:(title)" }),
            ("transformer", { $0.attributes[1].valueTransformerName = "X" }),
        ]
        for (label, change) in changes {
            #expect(bookHash(change) == base, "\(label)")
        }
        let configured = ObjectModel(entities: [Self.book, Self.author, Self.tag],
                                     configurations: [ConfigurationDescription(name: "C", entities: ["Book"])])
        #expect(configured.versionHash(ofEntity: "Book") == base)
    }

    @Test func parentChangesReachSubentitiesOnly() {
        let base = EntityDescription(name: "Base", attributes: [.attribute("id", .integer64)])
        let child = EntityDescription(name: "Child", parent: "Base", attributes: [.attribute("name", .string)])
        let other = EntityDescription(name: "Other")
        let before = ObjectModel(entities: [base, child, other])
        var changedBase = base
        changedBase.attributes.append(.attribute("created", .date))
        let after = ObjectModel(entities: [changedBase, child, other])
        #expect(before.versionHash(ofEntity: "Base") != after.versionHash(ofEntity: "Base"))
        #expect(before.versionHash(ofEntity: "Child") != after.versionHash(ofEntity: "Child"))
        #expect(before.versionHash(ofEntity: "Other") == after.versionHash(ofEntity: "Other"))
    }

    @Test func cyclesAndFixtureModelsHashWithoutHanging() throws {
        let cyclic = ObjectModel(entities: [EntityDescription(name: "A", parent: "B"), EntityDescription(name: "B", parent: "A")])
        #expect(cyclic.versionHash(ofEntity: "A").count == 32)
        #expect(cyclic.versionHash(ofEntity: "A") != cyclic.versionHash(ofEntity: "B"))

        for path in FixtureModels.allPaths {
            let url = URL(fileURLWithPath: path)
            let first = try XcodeModelLoader.load(contentsOf: url).entityVersionHashes
            let second = try XcodeModelLoader.load(contentsOf: url).entityVersionHashes
            #expect(first == second)
            #expect(!first.isEmpty)
            #expect(first.values.allSatisfy { $0.count == 32 })
            #expect(Set(first.values).count == first.count, "\(path): distinct entities share a hash")
        }
        // Library's Member has a transient attribute: removing it keeps the hash
        // (of Member and of its subentity Librarian); removing a stored one does not.
        let library = try FixtureModels.load("Library")
        let member = try #require(library.entity(named: "Member"))
        func replacingMember(_ change: (inout EntityDescription) -> Void) -> ObjectModel {
            var changed = member
            change(&changed)
            return ObjectModel(entities: library.entities.map { $0.name == "Member" ? changed : $0 })
        }
        let withoutTransient = replacingMember { $0.attributes.removeAll { $0.isTransient } }
        #expect(withoutTransient.versionHash(ofEntity: "Member") == library.versionHash(ofEntity: "Member"))
        #expect(withoutTransient.versionHash(ofEntity: "Librarian") == library.versionHash(ofEntity: "Librarian"))
        let withoutJoined = replacingMember { $0.attributes.removeAll { $0.name == "joined" } }
        #expect(withoutJoined.versionHash(ofEntity: "Member") != library.versionHash(ofEntity: "Member"))
        #expect(withoutJoined.versionHash(ofEntity: "Librarian") != library.versionHash(ofEntity: "Librarian"))
        #expect(withoutJoined.versionHash(ofEntity: "Book") == library.versionHash(ofEntity: "Book"))
    }

    @Test func modelVersionsHashAsTheirShapesChanged() throws {
        let current = try XcodeModelLoader.load(contentsOf: FixtureModels.journal)
        let first = try XcodeModelLoader.load(contentsOf: FixtureModels.journal.appendingPathComponent("Journal.xcdatamodel"))
        // Tag is the same in both versions; Entry gained attributes and a relationship.
        #expect(current.versionHash(ofEntity: "Tag") == first.versionHash(ofEntity: "Tag"))
        #expect(current.versionHash(ofEntity: "Entry") != first.versionHash(ofEntity: "Entry"))
        #expect(first.versionHash(ofEntity: "Notebook").isEmpty)
        #expect(current.modelVersionHash != first.modelVersionHash)
    }
}
