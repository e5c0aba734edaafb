import Foundation
import NIOCore
import StrataContext
import StrataModel
import StrataQuery
import StrataStore
import StrataSQLite
import StrataWire
import Testing
@testable import StrataServer

/// Rows written as the store reads them (`SQLiteStore.visitRowsNow` into an
/// `ObjectStateRowWriter`) are byte for byte what encoding the same rows'
/// snapshots writes, for every attribute type and to-one the SQLite store
/// holds.
@Suite struct ObjectStateRowWriterTests {
    private static func optional(_ name: String, _ type: AttributeType) -> AttributeDescription {
        AttributeDescription(name: name, type: type, isOptional: true)
    }

    /// Every stored attribute type (`Item`, with a to-one to `Owner`), and a
    /// to-one to a hierarchy (`Note.item` reaches `Item` or its subentity
    /// `Gadget`), whose destinations need a second statement.
    private static let model = ObjectModel(name: "Rows", entities: [
        EntityDescription(name: "Item", attributes: [
            optional("i16", .integer16), optional("i32", .integer32), optional("i64", .integer64),
            optional("dec", .decimal), optional("dbl", .double), optional("flt", .float),
            optional("str", .string), optional("flag", .boolean), optional("when", .date),
            optional("blob", .binary), optional("uid", .uuid), optional("link", .uri),
            AttributeDescription(name: "opaque", type: .transformable, isOptional: true, valueTransformerName: "NSSecureUnarchiveFromData"),
        ], relationships: [
            RelationshipDescription(name: "owner", destination: "Owner", inverse: "items"),
        ]),
        EntityDescription(name: "Gadget", parent: "Item", attributes: [optional("watts", .integer32)]),
        EntityDescription(name: "Owner", attributes: [optional("name", .string)], relationships: [
            RelationshipDescription(name: "items", destination: "Item", inverse: "owner", toMany: true),
        ]),
        EntityDescription(name: "Note", attributes: [optional("text", .string)], relationships: [
            RelationshipDescription(name: "item", destination: "Item"),
        ]),
    ])

    /// Texts that take each way through the reader: ASCII (read in
    /// place), empty, non-ASCII and U+0000 (stored as a BLOB).
    private static let texts = ["plain", "", "naïve 👩‍👩‍👧", "nul\u{0}inside", "x"]

    /// Decimals (one per item after the first) written from their keys as
    /// text, and one whose text is too long for that (made a `Decimal`).
    private static let decimals = ["", "-123456789012345678.25", "0.005", "3e50", "-1e70"]

    /// A container over one SQLite store of ``model``, filled by `fill`
    /// and saved, and its directory.
    private static func container(_ fill: @escaping @Sendable (isolated Context) async throws -> Void) async throws -> (PersistentContainer, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-row-writer-\(UUID().uuidString)")
        let container = try await PersistentContainer(
            model: model,
            storeDescriptions: [StoreDescription(url: directory.appendingPathComponent("Rows.sqlite"), type: .sqlite)], factory: .standard
        )
        try await container.newBackgroundContext().perform { context in
            try await fill(context)
            _ = try await context.save()
        }
        return (container, directory)
    }

    private func fetch(_ entity: String, _ resolver: PredicateResolver) throws -> ResolvedFetch {
        var request = FetchRequest(entityName: entity)
        request.sortDescriptors = [SortDescriptor("i64")]
        if entity != "Item" { request.sortDescriptors = [] }
        request.fetchLimit = 100
        return try resolver.resolve(request)
    }

    /// The snapshots' bytes and the visited rows' bytes of a fetch.
    private func bothEncodings(_ store: SQLiteStore, _ fetch: ResolvedFetch, limit: Int = 1 << 20) throws -> (snapshots: ByteBuffer, visited: ByteBuffer, rows: Int) {
        let allocator = ByteBufferAllocator()
        let query = try store.rowQuery(fetch)
        let snapshots = try #require(store.snapshotsNow(query, of: fetch.entityName, budget: .seconds(5)))
        var expected = allocator.buffer(capacity: 0)
        try ObjectStateEncoding.writeStates(of: snapshots, into: &expected, limit: limit)
        var writer = ObjectStateRowWriter(batch: allocator.buffer(capacity: 0), limit: limit)
        let rows = try #require(store.visitRowsNow(query, of: fetch.entityName, budget: .seconds(5), visitor: &writer))
        #expect(rows == snapshots.count)
        return (expected, writer.takeBatch(), rows)
    }

    @Test("Every attribute type and to-one is written as its snapshot is")
    func everyTypeAsItsSnapshot() async throws {
        let (container, directory) = try await Self.container { context in
            let owner = try context.insert("Owner")
            try owner.setValue(.string("Ada"), forKey: "name")
            for (i, text) in Self.texts.enumerated() {
                let item = try context.insert(i == 3 ? "Gadget" : "Item")
                // The first item has every value nil but its sort key.
                try item.setValue(.integer(Int64(i) - 2), forKey: "i64")
                guard i > 0 else { continue }
                try item.setValue(.integer(Int64(i) * 1000 - 32768), forKey: "i16")
                try item.setValue(.integer(Int64(Int32.min) + Int64(i)), forKey: "i32")
                try item.setValue(.decimal(Decimal(string: Self.decimals[i]) ?? 0), forKey: "dec")
                try item.setValue(.double(i == 2 ? -0.0 : Double(i) / 3), forKey: "dbl")
                try item.setValue(.double(Double(Float(i) / 7)), forKey: "flt")
                try item.setValue(.string(text), forKey: "str")
                try item.setValue(.boolean(i % 2 == 0), forKey: "flag")
                try item.setValue(.date(Date(timeIntervalSinceReferenceDate: -1e9 + Double(i) / 4)), forKey: "when")
                try item.setValue(.binary(Data((0..<(i * 40)).map { UInt8($0 & 0xFF) })), forKey: "blob")
                try item.setValue(.uuid(UUID()), forKey: "uid")
                try item.setValue(.uri("https://example.com/\(i)?q=é"), forKey: "link")
                try item.setValue(.binary(Data([1, 2, UInt8(i)])), forKey: "opaque")
                if i % 2 == 1 { try item.setValue(.object(owner.objectID), forKey: "owner") }
                if i == 3 { try item.setValue(.integer(1500), forKey: "watts") }
                let note = try context.insert("Note")
                try note.setValue(.string("about \(i)"), forKey: "text")
                try note.setValue(.object(item.objectID), forKey: "item")
            }
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try #require(container.coordinator.stores(for: "Item").first as? SQLiteStore)
        let resolver = container.coordinator.resolver

        let items = try fetch("Item", resolver)
        #expect(store.visitsRowsNow(of: "Item"))
        let (expected, visited, rows) = try bothEncodings(store, items)
        #expect(rows == Self.texts.count)
        #expect(visited.readableBytesView.elementsEqual(expected.readableBytesView))

        // A to-one into a hierarchy names its destination's entity with a
        // second statement: left to the snapshots.
        let notes = try fetch("Note", resolver)
        #expect(!store.visitsRowsNow(of: "Note"))
        var writer = ObjectStateRowWriter(batch: ByteBufferAllocator().buffer(capacity: 0), limit: 1 << 20)
        #expect(store.visitRowsNow(try store.rowQuery(notes), of: "Note", budget: .seconds(5), visitor: &writer) == nil)
        try await container.close()
    }

    @Test("Rows of every length prefix, past the writer's first memory, are written as their snapshots are")
    func rowsOfEveryPrefixLength() async throws {
        // Rows whose ObjectState takes a 1-, 2- and 3-byte length (under
        // 128 bytes, under 16 KiB, past it), so that each is moved up to
        // its prefix by a different distance, and together more than the
        // writer's first 4 KiB.
        let lengths = [0, 10, 200, 5_000, 20_000, 70_000, 3]
        let (container, directory) = try await Self.container { context in
            for (i, length) in lengths.enumerated() {
                let item = try context.insert("Item")
                try item.setValue(.integer(Int64(i)), forKey: "i64")
                if length > 0 { try item.setValue(.string(String(repeating: "abcdefg", count: length / 7)), forKey: "str") }
            }
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try #require(container.coordinator.stores(for: "Item").first as? SQLiteStore)
        let (expected, visited, rows) = try bothEncodings(store, try fetch("Item", container.coordinator.resolver))
        #expect(rows == lengths.count)
        #expect(visited.readableBytes > 90_000)
        #expect(visited.readableBytesView.elementsEqual(expected.readableBytesView))
        try await container.close()
    }

    @Test("Rows of random sizes, each written across the writer's memory growing, are their snapshots' bytes")
    func rowsAcrossEveryGrowth() throws {
        // Driven directly: 600 rows from 0 to 400 bytes, so that rows
        // begin at every distance from the end of the memory as it grows.
        var state: UInt64 = 0x5EED
        var writer = ObjectStateRowWriter(batch: ByteBufferAllocator().buffer(capacity: 0), limit: 1 << 24)
        var snapshots: [Snapshot] = []
        for key in 1...600 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let text = String(repeating: "x", count: Int(state >> 33) % 401)
            // Names as a store hands them over: UTF-8 bytes.
            try Array("S".utf8).withUnsafeBytes { store in
                try Array("Item".utf8).withUnsafeBytes { entity in
                    try writer.beginRow(storeIdentifier: store, entityName: entity, key: Int64(key), version: Int64(key % 3))
                }
            }
            // One value: a snapshot's values of one entity need not come in
            // the order they were given.
            var bytes = text
            try Array("str".utf8).withUnsafeBytes { name in
                try bytes.withUTF8 { try writer.value(name, .text(UnsafeRawBufferPointer($0))) }
            }
            try writer.endRow()
            snapshots.append(Snapshot(objectID: ObjectID(storeIdentifier: "S", entityName: "Item", key: .permanent(Int64(key))), version: Int64(key % 3),
                                      values: ["str": .string(text)]))
        }
        var expected = ByteBufferAllocator().buffer(capacity: 0)
        try ObjectStateEncoding.writeStates(of: snapshots, into: &expected, limit: 1 << 24)
        #expect(writer.takeBatch() == expected)
    }

    @Test("A batch past its limit is refused as the snapshots' encoding refuses it")
    func refusesPastTheLimit() async throws {
        let (container, directory) = try await Self.container { context in
            for i in 0..<10 {
                let item = try context.insert("Item")
                try item.setValue(.integer(Int64(i)), forKey: "i64")
                try item.setValue(.string(String(repeating: "a", count: 100)), forKey: "str")
            }
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try #require(container.coordinator.stores(for: "Item").first as? SQLiteStore)
        let items = try fetch("Item", container.coordinator.resolver)
        let allocator = ByteBufferAllocator()
        let query = try store.rowQuery(items)
        let snapshots = try #require(store.snapshotsNow(query, of: "Item", budget: .seconds(5)))
        var whole = allocator.buffer(capacity: 0)
        try ObjectStateEncoding.writeStates(of: snapshots, into: &whole, limit: 1 << 20)
        // Room for all the rows, then for one byte fewer.
        var fits = ObjectStateRowWriter(batch: allocator.buffer(capacity: 0), limit: whole.readableBytes)
        #expect(store.visitRowsNow(query, of: "Item", budget: .seconds(5), visitor: &fits) == 10)
        #expect(fits.takeBatch() == whole)
        var short = ObjectStateRowWriter(batch: allocator.buffer(capacity: 0), limit: whole.readableBytes - 1)
        #expect(store.visitRowsNow(query, of: "Item", budget: .seconds(5), visitor: &short) == nil)
        var truncated = allocator.buffer(capacity: 0)
        #expect(throws: WireError.self) { try ObjectStateEncoding.writeStates(of: snapshots, into: &truncated, limit: whole.readableBytes - 1) }
        try await container.close()
    }

    /// Items with a value of every kind a predicate compares, for
    /// ``argumentsOfEveryKind()``.
    private static func fillForArguments(_ context: isolated Context) throws {
        for i in 0..<6 {
            let item = try context.insert("Item")
            try item.setValue(.integer(Int64(i)), forKey: "i64")
            try item.setValue(.double(Double(i) / 4), forKey: "dbl")
            try item.setValue(.decimal(Decimal(string: "\(i).25") ?? 0), forKey: "dec")
            // The last item has no text.
            if i < Self.texts.count { try item.setValue(.string(Self.texts[i]), forKey: "str") }
            try item.setValue(.boolean(i % 2 == 0), forKey: "flag")
            try item.setValue(.date(Date(timeIntervalSinceReferenceDate: Double(i) * 1000)), forKey: "when")
            try item.setValue(.uuid(UUID(uuidString: "00000000-0000-0000-0000-00000000000\(i)") ?? UUID()), forKey: "uid")
        }
    }

    /// Predicates comparing with a value of each kind the store binds,
    /// as constants and as variables.
    private static let comparisons: [(format: String, variables: [String: VariableValue])] = [
        ("i64 >= 2 AND i64 < 5", [:]),
        ("i64 >= $LOW AND i64 <= $HIGH", ["LOW": .value(.integer(1)), "HIGH": .value(.integer(3))]),
        ("dbl > 0.3", [:]),
        ("dbl < $D", ["D": .value(.double(0.6))]),
        ("dec == 3.25", [:]),
        ("dec > $DEC", ["DEC": .value(.decimal(Decimal(string: "1.5") ?? 0))]),
        ("str == 'naïve 👩‍👩‍👧'", [:]),
        ("str == $S", ["S": .value(.string("plain"))]),
        ("str == $S", ["S": .value(.string("nul\u{0}inside"))]),
        ("flag == YES", [:]),
        ("when > CAST(1500, 'NSDate')", [:]),
        ("when <= $T", ["T": .value(.date(Date(timeIntervalSinceReferenceDate: 2000)))]),
        ("uid == $U", ["U": .value(.uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000004") ?? UUID()))]),
        ("str == nil", [:]),
    ]

    @Test("Arguments of every kind select the rows GRDB's binding selects", arguments: comparisons.indices)
    func argumentsOfEveryKind(_ index: Int) async throws {
        let (format, variables) = Self.comparisons[index]
        let (container, directory) = try await Self.container { context in try Self.fillForArguments(context) }
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try #require(container.coordinator.stores(for: "Item").first as? SQLiteStore)
        let request = try FetchRequest(entityName: "Item", format: format, sortDescriptors: [SortDescriptor("i64")], fetchLimit: 100)
        let fetch = try container.coordinator.resolver.resolve(request, variables: variables)
        // Twice, so that the second read runs the statement the first one
        // left; GRDB's own reads of it come before and after.
        for _ in 0..<2 {
            let (expected, visited, rows) = try bothEncodings(store, fetch)
            #expect(visited.readableBytesView.elementsEqual(expected.readableBytesView), "\(format)")
            #expect(rows > 0, "\(format) selects no item: the comparison proves nothing")
            #expect(try #require(store.snapshotsNow(store.rowQuery(fetch), of: "Item", budget: .seconds(5))).count == rows)
        }
        try await container.close()
    }
}
