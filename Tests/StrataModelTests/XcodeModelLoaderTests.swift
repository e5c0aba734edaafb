import Foundation
import Testing
@testable import StrataModel

/// The Xcode model importer, against the package's own fixtures
/// (`Tests/ModelFixtures`) and small documents written inline. The shared
/// real-world models are covered by ``SharedReferenceModelTests``.
@Suite struct XcodeModelLoaderTests {
    // MARK: Fixture models

    @Test(arguments: FixtureModels.names)
    func loadsEveryFixtureLikeAnIndependentScan(name: String) throws {
        let url = FixtureModels.url(name)
        let model = try XcodeModelLoader.load(contentsOf: url)
        #expect(model.name == name)
        #expect(model.sourceFile == url.path)
        try ContentsScanner.expect(model, toMatchScanOf: url)
    }

    @Test func journalPackageLoadsItsCurrentVersionLikeAnIndependentScan() throws {
        let current = FixtureModels.journal.appendingPathComponent("Journal 2.xcdatamodel/contents")
        let model = try XcodeModelLoader.load(contentsOf: FixtureModels.journal)
        #expect(model.name == "Journal 2")
        #expect(model.sourceFile == current.path)
        try ContentsScanner.expect(model, toMatchScanOf: current)

        let older = FixtureModels.journal.appendingPathComponent("Journal.xcdatamodel")
        let first = try XcodeModelLoader.load(contentsOf: older)
        #expect(first.name == "Journal")
        try ContentsScanner.expect(first, toMatchScanOf: older.appendingPathComponent("contents"))
    }

    @Test func libraryEntitiesAndInheritance() throws {
        let model = try FixtureModels.load("Library")
        #expect(model.entities.map(\.name) == [
            "Author", "Book", "DevicePreference", "Librarian", "Member",
            "Person", "Preference", "Publisher", "Review", "SyncedPreference",
        ])
        #expect(model.entities.filter(\.isAbstract).map(\.name) == ["Person", "Preference"])
        #expect(model.entities.allSatisfy { $0.representedClassName == $0.name })
        #expect(model.subentities(of: "Person") == ["Author", "Member"])
        #expect(model.subentities(of: "Member") == ["Librarian"])
        #expect(model.subentities(of: "Preference") == ["DevicePreference", "SyncedPreference"])
        #expect(model.hierarchy(of: "Person") == ["Person", "Author", "Member", "Librarian"])
        #expect(model.ancestry(of: "Librarian") == ["Person", "Member", "Librarian"])
        #expect(model.rootEntityName(of: "Librarian") == "Person")
        #expect(model.isEntity("Librarian", kindOf: "Person") && !model.isEntity("Author", kindOf: "Member"))

        // Inherited properties come first, root first.
        #expect(model.attributes(of: "Librarian").map(\.name) == [
            "born", "name", "website", "cardNumber", "joined", "preferences", "sessionToken", "badge", "desk",
        ])
        #expect(model.relationships(of: "Librarian").map(\.name) == ["reviews", "mentees", "mentor"])
        #expect(model.fetchedProperties(of: "Librarian").map(\.name) == ["recentReviews"])
        #expect(model.attribute(named: "name", in: "Author")?.type == .string)
        #expect(model.relationship(named: "reviews", in: "Librarian")?.deleteRule == .deny)

        let person = try #require(model.entity(named: "Person"))
        #expect(person.userInfo == ["strata.kind": "people: authors, members <and> librarians"])
        #expect(person.attributes.map(\.type) == [.date, .string, .uri])
        #expect(person.attributes.map(\.isOptional) == [true, false, true])
        #expect(model.entity(named: "Preference")?.uniquenessConstraints == [["key"]])
        #expect(model.entity(named: "SyncedPreference")?.attributes.map(\.type) == [.uuid, .integer64])
        #expect(model.loadDiagnostics.isEmpty)
        #expect(model.structuralDiagnostics().isEmpty)
    }

    @Test func libraryBookAttributes() throws {
        let model = try FixtureModels.load("Library")
        let book = try #require(model.entity(named: "Book"))
        let expected: [(String, AttributeType, Bool)] = [
            ("bookID", .uuid, false), ("cover", .binary, true), ("edition", .integer16, false),
            ("isbn", .string, false), ("lastOpened", .date, true), ("pageCount", .integer32, false),
            ("price", .decimal, true), ("published", .date, true), ("rating", .float, false),
            ("reviewCount", .integer64, true), ("scratchNote", .string, true), ("summary", .string, true),
            ("title", .string, false), ("titleKey", .string, true),
        ]
        #expect(book.attributes.count == expected.count)
        for (attribute, (name, type, optional)) in zip(book.attributes, expected) {
            #expect(attribute.name == name)
            #expect(attribute.type == type, "\(name)")
            #expect(attribute.isOptional == optional, "\(name)")
        }
        let a = Dictionary(uniqueKeysWithValues: book.attributes.map { ($0.name, $0) })
        #expect(a["edition"]?.defaultValue == .integer(1) && a["edition"]?.minValue == .integer(1))
        #expect(a["edition"]?.maxValue == .null)
        #expect(a["isbn"]?.minValue == .integer(10) && a["isbn"]?.maxValue == .integer(13))
        #expect(a["isbn"]?.regularExpression == "[0-9]{9}[0-9X]|[0-9]{13}")
        #expect(a["isbn"]?.defaultValue == .null)
        #expect(a["pageCount"]?.defaultValue == .integer(0) && a["pageCount"]?.minValue == .integer(0))
        #expect(a["price"]?.defaultValue == .decimal(0) && a["price"]?.minValue == .decimal(0))
        #expect(a["rating"]?.defaultValue == .double(0))
        #expect(a["rating"]?.minValue == .double(0) && a["rating"]?.maxValue == .double(5))
        #expect(a["cover"]?.allowsExternalBinaryDataStorage == true)
        #expect(book.attributes.filter { $0.allowsExternalBinaryDataStorage }.map(\.name) == ["cover"])
        #expect(book.attributes.filter(\.isTransient).map(\.name) == ["scratchNote"])
        #expect(book.attributes.filter(\.isDerived).map(\.name) == ["lastOpened", "reviewCount", "titleKey"])
        #expect(book.attributes.filter(\.isDerived).map(\.derivationExpression) == ["now()", "reviews.@count", "canonical:(title)"])
        #expect(book.userInfo == ["strata.note": "one row per edition & printing, \"as catalogued\""])

        // Every derived attribute of the model, with its expression.
        let derived = model.entities.flatMap { entity in
            entity.attributes.filter(\.isDerived).map { "\(entity.name).\($0.name) = \($0.derivationExpression ?? "")" }
        }
        #expect(derived == [
            "Book.lastOpened = now()", "Book.reviewCount = reviews.@count", "Book.titleKey = canonical:(title)",
            "Publisher.nameKey = lowercase:(name)", "Publisher.totalPages = catalog.@sum.pageCount",
            "Review.bookTitle = book.title",
        ])
        // Every transient attribute of the model.
        let transients = model.entities.flatMap { entity in
            entity.attributes.filter(\.isTransient).map { "\(entity.name).\($0.name)" }
        }
        #expect(transients == ["Book.scratchNote", "Member.sessionToken"])

        let member = try #require(model.entity(named: "Member"))
        let preferences = try #require(member.attributes.first { $0.name == "preferences" })
        #expect(preferences.type == .transformable)
        #expect(preferences.valueTransformerName == "NSSecureUnarchiveFromDataTransformer")
        #expect(preferences.customClassName == "[String: String]")
        #expect(member.attributes.first { $0.name == "cardNumber" }?.minValue == .integer(1))
        #expect(member.uniquenessConstraints == [["cardNumber"]])

        let review = try #require(model.entity(named: "Review"))
        let r = Dictionary(uniqueKeysWithValues: review.attributes.map { ($0.name, $0) })
        #expect(r["stars"]?.defaultValue == .integer(3))
        #expect(r["stars"]?.minValue == .integer(1) && r["stars"]?.maxValue == .integer(5))
        #expect(r["helpful"]?.defaultValue == .boolean(false))
        #expect(r["weight"]?.defaultValue == .double(1))
    }

    @Test func libraryRelationshipsInversesAndDeleteRules() throws {
        let model = try FixtureModels.load("Library")
        let book = try #require(model.entity(named: "Book"))
        #expect(book.relationships.map(\.name) == ["authors", "prequel", "publisher", "reviews", "sequel"])
        #expect(book.relationships.map(\.destinationEntityName) == ["Author", "Book", "Publisher", "Review", "Book"])
        #expect(book.relationships.map(\.inverseName) == ["books", "sequel", "catalog", "book", "prequel"])
        #expect(book.relationships.map(\.isToMany) == [true, false, false, true, false])
        #expect(book.relationships.map(\.isOrdered) == [false, false, false, false, false])
        #expect(book.relationships.map(\.maxCount) == [0, 1, 1, 0, 1])
        #expect(book.relationships.map(\.deleteRule) == [.nullify, .nullify, .nullify, .cascade, .nullify])
        #expect(book.relationships.allSatisfy { $0.isOptional && $0.minCount == 0 })

        // Many-to-many, ordered on one side only.
        let authorBooks = try #require(model.relationship(named: "books", in: "Author"))
        #expect(authorBooks.isToMany && authorBooks.isOrdered)
        #expect(model.inverse(of: authorBooks)?.name == "authors")
        #expect(model.inverse(of: authorBooks)?.isToMany == true)
        #expect(model.inverse(of: authorBooks)?.isOrdered == false)

        // A one-to-one pair on the same entity.
        let sequel = try #require(model.relationship(named: "sequel", in: "Book"))
        #expect(model.inverse(of: sequel)?.name == "prequel")
        #expect(model.inverse(of: model.inverse(of: sequel) ?? sequel)?.name == "sequel")

        // A required to-one: not optional, at most one.
        let reviewBook = try #require(model.relationship(named: "book", in: "Review"))
        #expect(!reviewBook.isOptional && !reviewBook.isToMany && reviewBook.maxCount == 1 && reviewBook.minCount == 0)
        #expect(model.inverse(of: reviewBook)?.deleteRule == .cascade)

        // One-to-many inverses; the inverse of an inherited relationship.
        let catalog = try #require(model.relationship(named: "catalog", in: "Publisher"))
        #expect(catalog.deleteRule == .deny && catalog.isToMany)
        #expect(model.inverse(of: catalog)?.name == "publisher")
        #expect(model.inverse(of: catalog)?.isToMany == false)
        let reviewer = try #require(model.relationship(named: "reviewer", in: "Review"))
        #expect(reviewer.destinationEntityName == "Member")
        #expect(model.inverse(of: reviewer)?.deleteRule == .deny)

        // Self-referential relationships on a subentity, with No Action.
        let librarian = try #require(model.entity(named: "Librarian"))
        #expect(librarian.relationships.map(\.name) == ["mentees", "mentor"])
        #expect(librarian.relationships.map(\.deleteRule) == [.nullify, .noAction])
        #expect(librarian.relationships.allSatisfy { $0.destinationEntityName == "Librarian" && $0.inverseEntityName == "Librarian" })

        // Every delete rule appears, and every relationship has an inverse that points back.
        let all = model.entities.flatMap(\.relationships)
        #expect(all.count == 12)
        #expect(Set(all.map(\.deleteRule)) == Set(DeleteRule.allCases))
        for relationship in all {
            let inverse = try #require(model.inverse(of: relationship), "\(relationship.name)")
            #expect(model.inverse(of: inverse)?.name == relationship.name, "\(relationship.name)")
        }
    }

    @Test func libraryFetchedPropertiesIndexesAndConstraints() throws {
        let model = try FixtureModels.load("Library")
        let book = try #require(model.entity(named: "Book"))
        #expect(book.fetchedProperties == [
            FetchedPropertyDescription(name: "otherEditions", entity: "Book",
                                       predicate: "isbn == $FETCH_SOURCE.isbn AND edition != $FETCH_SOURCE.edition"),
            FetchedPropertyDescription(name: "praise", entity: "Review", predicate: "book == $FETCH_SOURCE AND stars >= 4",
                                       userInfo: ["strata.sort": "posted DESC"]),
        ])
        #expect(model.fetchedProperty(named: "namesakes", in: "Author") == FetchedPropertyDescription(
            name: "namesakes", entity: "Person", predicate: "name == $FETCH_SOURCE.name AND SELF != $FETCH_SOURCE"))
        #expect(model.fetchedProperty(named: "recentReviews", in: "Librarian")?.predicate
            == "reviewer == $FETCH_SOURCE AND posted > $FETCH_SOURCE.joined")
        let fetched = model.entities.flatMap(\.fetchedProperties)
        #expect(fetched.count == 4)
        #expect(fetched.allSatisfy { $0.predicate?.contains("$FETCH_SOURCE") == true })

        #expect(book.fetchIndexes == [
            FetchIndex(name: "byTitleIndex", elements: [.init(property: "title")]),
            FetchIndex(name: "byPublishedIndex", elements: [
                .init(property: "published", ascending: false), .init(property: "rating", ascending: false),
            ]),
        ])
        #expect(book.uniquenessConstraints == [["bookID"], ["isbn", "edition"]])
        #expect(model.entities.filter { !$0.uniquenessConstraints.isEmpty }.map(\.name) == ["Book", "Member", "Preference", "Publisher"])
        #expect(model.line(key: "Book.fetchIndex:byPublishedIndex") == 42)
        #expect(model.line(key: "Book.uniquenessConstraint:2") == 50)
    }

    @Test func libraryTemplatesConfigurationsAndLines() throws {
        let model = try FixtureModels.load("Library")
        #expect(model.fetchRequestTemplates == [
            FetchRequestTemplate(name: "allPeople", entity: "Person"),
            FetchRequestTemplate(name: "bookByISBN", entity: "Book", predicate: "isbn == $ISBN", fetchLimit: 1),
            FetchRequestTemplate(name: "longReads", entity: "Book", predicate: "pageCount >= $PAGES AND rating > 4", resultType: 1),
            FetchRequestTemplate(name: "publisherNames", entity: "Publisher", resultType: 2),
            FetchRequestTemplate(name: "shortClassics", entity: "Book", predicate: "title BEGINSWITH[c] \"The \" AND pageCount < $PAGES"),
        ])
        #expect(model.fetchRequestTemplate(named: "bookByISBN")?.fetchLimit == 1)

        #expect(model.configurations == [
            ConfigurationDescription(name: "Catalog", entities: ["Author", "Book", "Librarian", "Member", "Person", "Publisher", "Review"]),
            ConfigurationDescription(name: "Device", entities: ["DevicePreference", "Preference"]),
            ConfigurationDescription(name: "Synced", entities: ["Preference", "SyncedPreference"]),
        ])
        // An abstract entity in two configurations, each with one of its subentities.
        #expect(model.configurations(containing: "Preference") == ["Device", "Synced"])
        #expect(model.configurations(containing: "Book") == ["Catalog"])
        #expect(model.entityNames(inConfiguration: "Device") == ["DevicePreference", "Preference"])
        #expect(model.entityNames(inConfiguration: nil).count == 10)
        #expect(model.entityNames(inConfiguration: "Missing").isEmpty)

        // Lines: the XML declaration is line 1, <model> line 2.
        #expect(model.line(entity: "Author") == 3)
        #expect(model.line(entity: "Book") == 10)
        #expect(model.line(entity: "Book", property: "bookID") == 11)
        #expect(model.line(entity: "Book", property: "authors") == 25)
        #expect(model.line(entity: "Book", property: "praise") == 33)
        #expect(model.line(entity: "SyncedPreference") == 123)
        #expect(model.line(key: "fetchRequest:allPeople") == 127)
        #expect(model.line(key: "fetchRequest:shortClassics") == 131)
        #expect(model.line(key: "configuration:Catalog") == 132)
        #expect(model.line(key: "configuration:Synced") == 145)
    }

    @Test func telemetryTypesDefaultsAndBounds() throws {
        let model = try FixtureModels.load("Telemetry")
        #expect(model.entities.map(\.name) == ["Calibration", "Reading", "Sensor", "Station"])
        #expect(model.entities.map(\.representedClassName) == ["STCalibration", "STReading", "STSensor", "STStation"])
        // Every attribute type Xcode offers for a stored or transient attribute
        // (composites are in the Oddities fixture).
        let types = Set(model.entities.flatMap(\.attributes).map(\.type))
        #expect(types == Set(AttributeType.allCases).subtracting([.objectID, .composite]))

        let sensor = try #require(model.entity(named: "Sensor"))
        #expect(sensor.renamingIdentifier == "Probe" && sensor.versionHashModifier == "2")
        #expect(sensor.userInfo == ["st.unit": "°C", "st.vendor notes": "calibrate \"yearly\" & after repair"])
        let s = Dictionary(uniqueKeysWithValues: sensor.attributes.map { ($0.name, $0) })
        #expect(s["active"]?.defaultValue == .boolean(true))
        #expect(s["gain"]?.defaultValue == .double(1))
        #expect(s["gain"]?.minValue == .double(-10) && s["gain"]?.maxValue == .double(10))
        #expect(s["label"]?.defaultValue == .string("unnamed"))
        #expect(s["label"]?.minValue == .integer(1) && s["label"]?.maxValue == .integer(64))
        #expect(s["offset"]?.defaultValue == .double(0))
        #expect(s["offset"]?.minValue == .double(-2.5) && s["offset"]?.maxValue == .double(2.5))
        #expect(s["precision"]?.defaultValue == .decimal(try #require(Decimal(string: "0.01"))))
        #expect(s["precision"]?.minValue == .decimal(0))
        #expect(s["precision"]?.maxValue == .decimal(try #require(Decimal(string: "99.99"))))
        #expect(s["rangeHigh"]?.defaultValue == .integer(1000))
        #expect(s["rangeHigh"]?.minValue == .integer(-40000) && s["rangeHigh"]?.maxValue == .integer(40000))
        #expect(s["rangeLow"]?.defaultValue == .integer(-40))
        #expect(s["rangeLow"]?.minValue == .integer(-300) && s["rangeLow"]?.maxValue == .integer(300))
        #expect(s["serial"]?.maxValue == .integer(9_007_199_254_740_991))
        #expect(s["serial"]?.renamingIdentifier == "serialNumber")
        #expect(s["firmware"]?.allowsExternalBinaryDataStorage == true)
        #expect(s["identifier"]?.type == .uuid && s["manual"]?.type == .uri)
        #expect(sensor.attributes.filter(\.isTransient).map(\.name) == ["lastSeen", "scratch"])
        #expect(s["scratch"]?.type == .undefined)
        #expect(sensor.attributes.filter { !$0.isOptional }.count == 9)

        let calibration = try #require(model.entity(named: "Calibration"))
        let c = Dictionary(uniqueKeysWithValues: calibration.attributes.map { ($0.name, $0) })
        let performedAt = try #require(c["performedAt"])
        // The …DateTimeInterval attributes (seconds since 2001) are read, not the strings.
        #expect(performedAt.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 738_936_000)))
        #expect(performedAt.defaultValue == .date(Date(timeIntervalSince1970: 1_717_243_200)))   // 2024-06-01 12:00 UTC
        #expect(performedAt.minValue == .date(Date(timeIntervalSinceReferenceDate: 536_457_600)))
        #expect(performedAt.maxValue == .date(Date(timeIntervalSinceReferenceDate: 978_220_800)))
        #expect(c["drift"]?.minValue == .decimal(-1) && c["drift"]?.maxValue == .decimal(1))
        #expect(c["coefficients"]?.valueTransformerName == "STCoefficientsTransformer")
        #expect(c["coefficients"]?.customClassName == "NSArray")

        let station = try #require(model.entity(named: "Station"))
        let code = try #require(station.attributes.first { $0.name == "code" })
        #expect(code.regularExpression == "[A-Z]{3}[0-9]{2}")
        #expect(code.minValue == .integer(5) && code.maxValue == .integer(5))
        #expect(station.attributes.first { $0.name == "altitude" }?.minValue == .double(-430.5))
        #expect(station.userInfo == ["st.table": "stations"])

        let reading = try #require(model.entity(named: "Reading"))
        #expect(reading.attributes.filter(\.isIndexed).map(\.name) == ["recorded"])
        #expect(reading.attributes.first { $0.name == "quality" }?.defaultValue == .integer(100))
        #expect(reading.attributes.first { $0.name == "flagged" }?.defaultValue == .boolean(false))
        #expect(model.loadDiagnostics.isEmpty)
    }

    @Test func telemetryRelationshipsIndexesAndWarnings() throws {
        let model = try FixtureModels.load("Telemetry")
        let sensor = try #require(model.entity(named: "Sensor"))
        #expect(sensor.relationships.map(\.name) == ["calibrations", "readings", "replacement", "station"])
        #expect(sensor.relationships.map(\.deleteRule) == [.cascade, .cascade, .nullify, .nullify])
        #expect(sensor.relationships.map(\.isOrdered) == [true, false, false, false])
        #expect(sensor.relationships.map(\.inverseName) == ["sensor", "sensor", nil, "sensors"])
        let station = try #require(model.relationship(named: "station", in: "Sensor"))
        #expect(!station.isOptional && station.minCount == 1 && station.maxCount == 1)
        let sensors = try #require(model.relationship(named: "sensors", in: "Station"))
        #expect(sensors.isToMany && sensors.minCount == 1 && sensors.maxCount == 16 && sensors.deleteRule == .cascade)
        #expect(model.inverse(of: sensors)?.name == "station")
        #expect(model.relationship(named: "sensor", in: "Reading")?.isIndexed == true)
        #expect(model.inverse(of: try #require(model.relationship(named: "calibrations", in: "Sensor")))?.minCount == 1)

        #expect(sensor.fetchIndexes == [
            FetchIndex(name: "Sensor_compound_1", elements: [.init(property: "serial")]),
            FetchIndex(name: "Sensor_compound_2", elements: [.init(property: "station"), .init(property: "label")]),
        ])
        #expect(model.fetchedProperty(named: "laterReadings", in: "Reading")?.predicate
            == "sensor == $FETCH_SOURCE.sensor AND recorded > $FETCH_SOURCE.recorded")
        #expect(model.fetchRequestTemplates == [
            FetchRequestTemplate(name: "flaggedReadings", entity: "Reading", predicate: "flagged == YES", resultType: 1),
            FetchRequestTemplate(name: "recentReadings", entity: "Reading", predicate: "recorded > $SINCE AND quality >= 50", fetchLimit: 500),
            FetchRequestTemplate(name: "stationByCode", entity: "Station", predicate: "code ==[c] $CODE", fetchLimit: 1),
        ])
        #expect(model.configurations.isEmpty)
        #expect(model.entityNames(inConfiguration: nil) == ["Calibration", "Reading", "Sensor", "Station"])

        // The one relationship without an inverse is a warning, with its line.
        let diagnostics = model.structuralDiagnostics()
        #expect(diagnostics.count == 1)
        let warning = try #require(diagnostics.first)
        #expect(warning.severity == .warning)
        #expect(warning.entity == "Sensor" && warning.property == "replacement")
        #expect(warning.line == 37)
        #expect(warning.file == FixtureModels.url("Telemetry").path)
    }

    @Test func odditiesAreToleratedAndIgnored() throws {
        let model = try FixtureModels.load("Oddities")
        // Comments, the <composite> definition, unknown sections and the
        // diagram layout are not entities.
        #expect(model.entities.map(\.name) == ["Gadget", "Part", "Placeholder"])
        let gadget = try #require(model.entity(named: "Gadget"))
        #expect(gadget.representedClassName == ".Gadget")
        #expect(gadget.attributes.map(\.name) == ["location", "name", "notes", "scratch"])
        #expect(gadget.attributes.map(\.type) == [.composite, .string, .string, .undefined])
        #expect(gadget.attributes.map(\.isTransient) == [false, false, false, true])
        #expect(gadget.attributes.first { $0.name == "notes" }?.userInfo == [:])
        // Attributes Strata has no use for (Spotlight, CloudKit encryption) change nothing else.
        let name = try #require(gadget.attributes.first { $0.name == "name" })
        #expect(!name.isOptional && name.preserveAfterDeletion && name.defaultValue == .null)
        // Both userInfo blocks are read; numeric and named character references are decoded.
        #expect(gadget.userInfo == [
            "empty": "", "multi\nline": "tab\tseparated", "strata": "<tolerant> & 'lenient'", "second block": "merged",
        ])
        #expect(gadget.relationships.map(\.name) == ["parts"])
        #expect(gadget.relationships.first?.deleteRule == .cascade)
        // The expression element of the fetch index is skipped, with a warning.
        #expect(gadget.fetchIndexes == [FetchIndex(name: "byLocationIndex", elements: [.init(property: "name", ascending: false)])])
        #expect(model.loadDiagnostics.count == 1)
        let warning = try #require(model.loadDiagnostics.first)
        #expect(warning.severity == .warning && warning.entity == "Gadget" && warning.line == 14)
        #expect(warning.message.contains("expression index elements are not supported"))
        #expect(model.structuralDiagnostics() == model.loadDiagnostics)

        let part = try #require(model.entity(named: "Part"))
        #expect(part.fetchedProperties == [
            FetchedPropertyDescription(name: "everyGadget", entity: "Gadget"),
            FetchedPropertyDescription(name: "siblings", entity: "Part",
                                       predicate: "gadget == $FETCH_SOURCE.gadget AND serial != $FETCH_SOURCE.serial"),
        ])
        let placeholder = try #require(model.entity(named: "Placeholder"))
        #expect(placeholder.attributes.isEmpty && placeholder.relationships.isEmpty && placeholder.fetchedProperties.isEmpty)
        #expect(model.fetchRequestTemplates == [FetchRequestTemplate(name: "gadgetsNamed", entity: "Gadget", predicate: "name LIKE[c] $PATTERN")])
        #expect(model.configurations == [ConfigurationDescription(name: "Everything", entities: ["Gadget", "Part", "Placeholder"])])
        // The comment before <model> counts as a line.
        #expect(model.line(entity: "Gadget") == 4)
        #expect(model.line(entity: "Part") == 29)
        #expect(model.line(key: "fetchRequest:gadgetsNamed") == 45)
    }

    @Test func journalVersionsDiffer() throws {
        let current = try XcodeModelLoader.load(contentsOf: FixtureModels.journal)
        let first = try XcodeModelLoader.load(contentsOf: FixtureModels.journal.appendingPathComponent("Journal.xcdatamodel"))
        #expect(first.entities.map(\.name) == ["Entry", "Tag"])
        #expect(current.entities.map(\.name) == ["Entry", "Notebook", "Tag"])
        #expect(first.attributes(of: "Entry").map(\.name) == ["body", "created", "heading"])
        #expect(current.attributes(of: "Entry").map(\.name) == ["body", "created", "mood", "title"])
        // The renamed attribute keeps its old name as its renaming identifier.
        #expect(current.attribute(named: "title", in: "Entry")?.renamingIdentifier == "heading")
        #expect(current.entity(named: "Tag") == first.entity(named: "Tag"))
        let entries = try #require(current.relationship(named: "entries", in: "Notebook"))
        #expect(entries.isOrdered && entries.deleteRule == .cascade && current.inverse(of: entries)?.name == "notebook")
        #expect(current.structuralDiagnostics().isEmpty && first.structuralDiagnostics().isEmpty)
    }

    // MARK: Folders

    private static let versionOne = ModelFiles.document("""
        <entity name="Old" representedClassName="Old"/>
        """)
    private static let versionTwo = ModelFiles.document("""
        <entity name="New" representedClassName="New">
            <attribute name="title" attributeType="String"/>
        </entity>
        """)

    @Test func xcdatamodeldUsesCurrentVersionFromPlist() throws {
        let folder = try ModelFiles.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ModelFiles.write(Self.versionOne, to: "Books.xcdatamodeld/Books.xcdatamodel/contents", in: folder)
        let current = try ModelFiles.write(Self.versionTwo, to: "Books.xcdatamodeld/Books 2.xcdatamodel/contents", in: folder)
        try ModelFiles.write("""
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
        let folder = try ModelFiles.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ModelFiles.write(Self.versionOne, to: "Only.xcdatamodeld/First.xcdatamodel/contents", in: folder)
        let model = try XcodeModelLoader.load(contentsOf: folder.appendingPathComponent("Only.xcdatamodeld"))
        #expect(model.name == "First")
        #expect(model.entities.map(\.name) == ["Old"])
    }

    @Test func xcdatamodeldWithSeveralVersionsAndNoPlistNamesThem() throws {
        let folder = try ModelFiles.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ModelFiles.write(Self.versionOne, to: "Two.xcdatamodeld/A.xcdatamodel/contents", in: folder)
        try ModelFiles.write(Self.versionTwo, to: "Two.xcdatamodeld/B.xcdatamodel/contents", in: folder)
        let error = try #require(throws: StrataError.self) {
            try XcodeModelLoader.load(contentsOf: folder.appendingPathComponent("Two.xcdatamodeld"))
        }
        #expect(error.code == .modelUnreadable)
        #expect(error.message.contains("A.xcdatamodel") && error.message.contains("B.xcdatamodel"))
        #expect(error.message.contains("Two.xcdatamodeld"))
    }

    @Test func plistNamingAMissingVersionIsAnError() throws {
        let folder = try ModelFiles.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ModelFiles.write(Self.versionOne, to: "M.xcdatamodeld/A.xcdatamodel/contents", in: folder)
        try ModelFiles.write("""
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
        let folder = try ModelFiles.temporaryFolder()
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
        let folder = try ModelFiles.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try ModelFiles.write(Self.versionTwo, to: "whatever.xml", in: folder)
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
        let xml = ModelFiles.document("""
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
        let xml = ModelFiles.document("""
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
        let xml = ModelFiles.document("""
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
        let xml = ModelFiles.document("""
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
        let xml = ModelFiles.document("""
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
        var bytes = Array(ModelFiles.document(#"<entity name="A"><attribute name="x" attributeType="String"/></entity>"#).utf8)
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

    /// Found by the model fuzz target: FoundationXML reads a NULL string for
    /// a processing instruction without data, and crashed the process.
    @Test func processingInstructionsWithoutDataAreRefusedBeforeParsing() throws {
        #expect(XMLTreeBuilder.firstEmptyProcessingInstruction(in: Data("<?xml?>\n<model/>".utf8)) == 0)
        #expect(XMLTreeBuilder.firstEmptyProcessingInstruction(in: Data("<model><?target   ?></model>".utf8)) == 7)
        #expect(XMLTreeBuilder.firstEmptyProcessingInstruction(in: Data("<?xml version=\"1.0\"?><model/>".utf8)) == nil)
        // Checked wherever it stands: libxml2's recovery may read it as markup.
        #expect(XMLTreeBuilder.firstEmptyProcessingInstruction(in: Data("<model><!-- <?x?> --></model>".utf8)) == 12)
        #expect(XMLTreeBuilder.firstEmptyProcessingInstruction(in: Data("<?xml version=\"1.0\"?/>\n<m a=\"<?xml?>\"/>".utf8)) == 29)
        #expect(XMLTreeBuilder.firstEmptyProcessingInstruction(in: Data("<model><?x".utf8)) == 7)
        // Entities would bring such an instruction back through expansion:
        // document type declarations are refused too (Xcode writes none).
        let entity = "<!DOCTYPE m [<!ENTITY e \"&#60;?x?>\">]>\n<model>&e;</model>"
        #expect(XMLTreeBuilder.firstUnsupportedMarkup(in: Data(entity.utf8))?.isDocumentType == true)
        let entityError = try #require(throws: StrataError.self) {
            try XcodeModelLoader.load(data: Data(entity.utf8), fileName: "entity.xml")
        }
        #expect(entityError.code == .modelUnreadable)
        #expect(entityError.message.contains("document type"), "\(entityError.message)")
        for text in ["<?xml?>\n<model type=\"x\">\n<entity name=\"A\"/>\n</model>", "<model>\n  <?pi?>\n</model>"] {
            let error = try #require(throws: StrataError.self) {
                try XcodeModelLoader.load(data: Data(text.utf8), fileName: "pi.xml")
            }
            #expect(error.code == .modelUnreadable)
            #expect(error.message.hasPrefix("pi.xml:"))
            #expect(error.message.contains("processing instruction"))
        }
    }

    @Test func truncatedFixtureFilesNeverCrash() throws {
        let data = try Data(contentsOf: FixtureModels.url("Library"))
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
        #expect(try XcodeModelLoader.load(data: data, fileName: "whole.contents").entities.count == 10)
    }

    @Test func randomBytesAndMutationsNeverCrash() throws {
        var generator = SplitMix64(seed: 0x5742_4154_41)
        let original = [UInt8](try Data(contentsOf: FixtureModels.url("Telemetry")))
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
