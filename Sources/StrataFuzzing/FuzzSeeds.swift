import Foundation
import NIOCore
import StrataModel
import StrataSamples
import StrataStore
import StrataWire
import SwiftProtobuf

/// The seed corpus of every target, made from real messages, models,
/// predicates and store files. `Tools/fuzz.sh seed` writes them to
/// `Fuzz/Corpus/<target>/seed-<name>`; they are committed.
public enum FuzzSeeds {
    /// Seeds by target, then by name.
    public static func all() async throws -> [FuzzTarget: [String: [UInt8]]] {
        [
            .frame: try frames(),
            .request: try SeedRequests.corpus(),
            .predicate: predicates(),
            .model: models(),
            .binaryStore: try await binaryStores(),
            .value: try values(),
        ]
    }

    /// Framed client messages, the first byte being the piece size.
    static func frames() throws -> [String: [UInt8]] {
        func framed(_ frames: [Strata_V1_ClientFrame], compressed: Bool = false, pieces: UInt8 = 3) throws -> [UInt8] {
            var bytes: [UInt8] = [pieces]
            for frame in frames {
                var payload = ByteBuffer(bytes: try frame.serializedBytes() as [UInt8])
                if compressed { payload = try Zlib.deflate(payload) }
                bytes.append(compressed ? 1 : 0)
                let length = UInt32(payload.readableBytes)
                bytes += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
                bytes += payload.readableBytesView
            }
            return bytes
        }
        let hello = Strata_V1_ClientFrame.with {
            $0.requestID = 1
            $0.hello = .with { $0.version = WireProtocol.version; $0.clientName = "seed"; $0.acceptCompression = true }
        }
        let requests = try SeedRequests.corpus().values.sorted { $0.count < $1.count }.map { try Strata_V1_ClientFrame(serializedBytes: $0) }
        return [
            "hello": try framed([hello]),
            "hello-and-requests": try framed([hello] + requests, pieces: 15),
            "compressed": try framed([hello] + requests, compressed: true, pieces: 7),
            "empty-frames": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            "bad-flags": [4, 0x02, 0, 0, 0, 1, 0],
            "too-long": [0, 0, 0x7F, 0xFF, 0xFF, 0xFF],
            "truncated": [1, 0, 0, 0, 0, 9, 8, 1],
        ]
    }

    /// Predicates of every construct the language has.
    static func predicates() -> [String: [UInt8]] {
        let texts = [
            "str == $S", "str ==[cd] $T OR str BEGINSWITH[c] 'a'", "i64 > 3 AND i64 <= $N", "dbl BETWEEN $R",
            "dec >= 0.25 AND dec != nil", "flag == YES", "when < $D", "uid == $U", "i16 IN $L", "NOT (str LIKE '*ul*')",
            "str MATCHES '[a-z]+'", "str CONTAINS[d] 'e' && !(i32 < 0)", "link ENDSWITH '3'",
            "ANY books.title ==[c] 'dune'", "ALL books.pages > 0", "NONE books.tags.name == 'sf'", "books.@count >= 2",
            "books.@sum.pages > 100", "books.@avg.price < 2", "books.@max.title == 'Zed'", "mentor.name == 'Ann'",
            "mentor == nil", "SUBQUERY(books, $b, $b.pages > 100 AND $b.author.name == 'Ann').@count > 0",
            "author.books.@count == 2", "chapters.@count == 3 AND author.mentor == nil", "TRUEPREDICATE", "FALSEPREDICATE",
            "SELF == SELF", "name IN {'Ann', 'bob'}", "born == CAST(-1000, \"NSDate\")", "rating * 2 > 1",
            "i64 == 0x10 OR i64 == 1e3", "#AND == 1", "str == \"NUL\\u0000x\"",
        ]
        var seeds: [String: [UInt8]] = [:]
        for (i, text) in texts.enumerated() { seeds[String(format: "%02d", i)] = Array(text.utf8) }
        return seeds
    }

    /// Small model documents in Xcode's format.
    static func models() -> [String: [UInt8]] {
        let books = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23F79" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Author" representedClassName="Author" syncable="YES" codeGenerationType="class">
                <attribute name="name" attributeType="String" defaultValueString="?"/>
                <attribute name="born" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
                <fetchedProperty name="longBooks" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Book" predicateString="author == $FETCH_SOURCE AND pages &gt; 300"/>
                </fetchedProperty>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="name"/></uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Book" representedClassName="Book" syncable="YES">
                <attribute name="title" attributeType="String" minValueString="1" maxValueString="200"/>
                <attribute name="pages" optional="YES" attributeType="Integer 32" minValueString="0" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="price" optional="YES" attributeType="Decimal" defaultValueString="0.0"/>
                <attribute name="canonical" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(title)"/>
                <attribute name="note" optional="YES" transient="YES" attributeType="String"/>
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
                <relationship name="chapters" optional="YES" toMany="YES" deletionRule="Cascade" ordered="YES" destinationEntity="Chapter" inverseName="book" inverseEntity="Chapter"/>
            </entity>
            <entity name="EBook" representedClassName="EBook" parentEntity="Book" syncable="YES">
                <attribute name="fileSize" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
            </entity>
            <entity name="Chapter" representedClassName="Chapter" syncable="YES">
                <attribute name="number" attributeType="Integer 16" usesScalarValueType="YES"/>
                <relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="chapters" inverseEntity="Book"/>
            </entity>
            <fetchRequest name="LongBooks" entity="Book" predicateString="pages &gt; 500"/>
            <configuration name="Cloud" usedWithCloudKit="YES">
                <memberEntity name="Author"/>
                <memberEntity name="Book"/>
                <memberEntity name="EBook"/>
                <memberEntity name="Chapter"/>
            </configuration>
        </model>
        """
        let everyType = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Sample" syncable="YES">
                <attribute name="a" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
                <attribute name="b" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
                <attribute name="c" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
                <attribute name="d" optional="YES" attributeType="Decimal"/>
                <attribute name="e" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
                <attribute name="f" optional="YES" attributeType="Float" usesScalarValueType="YES"/>
                <attribute name="g" optional="YES" attributeType="String" regularExpressionString="[a-z]*"/>
                <attribute name="h" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>
                <attribute name="i" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="j" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="k" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>
                <attribute name="l" optional="YES" attributeType="URI"/>
                <attribute name="m" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="NSArray"/>
                <userInfo><entry key="k" value="v"/></userInfo>
                <unknownElement whatever="1"/>
            </entity>
        </model>
        """
        return ["books": Array(books.utf8), "every-type": Array(everyType.utf8), "not-a-model": Array("<plist/>".utf8)]
    }

    /// Real store files of the Books sample and of ``FuzzModel``.
    static func binaryStores() async throws -> [String: [UInt8]] {
        var seeds: [String: [UInt8]] = [:]
        for (name, model, mode) in [("books", BooksSample.model, UInt8(0)), ("graph", FuzzModel.model, UInt8(2))] {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-fuzz-seeds-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("seed.binary")
            let store = try await BinaryStore(description: StoreDescription(url: url, type: .binary), model: model)
            if mode == 2 {
                _ = try await store.save(PredicateDataset.changes())
            } else {
                _ = try await store.save(StoreChanges(inserts: (0..<3).map { i in
                    .init(temporaryID: .temporary(entityName: "Book"), values: [
                        "uuid": .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(i)))),
                        "title": .string("Book \(i)"), "pages": .integer(Int64(i * 10)),
                    ])
                }))
            }
            try await store.close()
            let file = try [UInt8](Data(contentsOf: url))
            seeds["\(name)-file"] = [mode] + file
            seeds["\(name)-payload"] = [mode | 1] + BinaryStore.payload(ofFile: file)
        }
        seeds["empty"] = [0]
        return seeds
    }

    /// One wire value of every kind, and decimals as text.
    static func values() throws -> [String: [UInt8]] {
        let values: [String: PropertyValue] = [
            "integer": .integer(-42), "double": .double(0.1), "decimal": .decimal(Decimal(12345) / 100), "string": .string("NUL\u{0}é"),
            "boolean": .boolean(true), "date": .date(Date(timeIntervalSinceReferenceDate: 1.5)), "binary": .binary(Data([0, 1, 255])),
            "uuid": .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))), "uri": .uri("https://example.com"),
            "object": .object(ObjectID(storeIdentifier: "00000000-0000-0000-0000-000000000000", entityName: "Book", key: .permanent(1))),
        ]
        var seeds = try values.mapValues { try $0.wire.serializedBytes() as [UInt8] }
        for (i, text) in ["1E128", "10E127", "-0.000123", "12345678901234567890123456789012345678E127", "1e-128"].enumerated() {
            seeds["decimal-text-\(i)"] = Array(text.utf8)
        }
        // Typed text: the first byte picks the type (8 is Date, 0 Integer 16, 3 Decimal, 9 UUID, 11 Binary).
        for (i, (type, text)) in [(UInt8(8), "2024-05-01T12:30:00.250+02:00"), (8, "1999-12-31 23:59"), (0, "-32768"), (3, "-12.50"),
                                   (9, "4f1d2c3b-0000-4000-8000-00000000000a"), (11, "AAEC/w=="), (7, "YES"), (10, "https://example.com/ü")].enumerated() {
            seeds["text-\(i)"] = [type] + Array(text.utf8)
        }
        return seeds
    }
}
