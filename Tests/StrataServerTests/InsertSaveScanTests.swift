import Foundation
import NIOCore
import StrataContext
import StrataModel
import StrataSamples
import StrataStore
import StrataWire
import Testing
@testable import StrataServer

/// ``InsertSaveScan`` reads a save of inserts into exactly the request the
/// full path makes of it (SwiftProtobuf's decoding, then
/// ``ServerCore/decode(_:)`` with the merge policy and author), and takes
/// no save that path refuses: a refusal always comes from that path.
@Suite struct InsertSaveScanTests {
    /// Values of every kind, valid and not, and object IDs of every form.
    private static let kinds: [Strata_V1_Value.OneOf_Kind?] = [
        nil,
        .integer(0), .integer(-1), .integer(.max), .integer(.min),
        .double(0), .double(-0.0), .double(.infinity), .double(-1.5e300),
        .decimal("-123.45"), .decimal("1E128"), .decimal(""), .decimal("12abc"), .decimal("1E165"),
        .string(""), .string("naïve 👩‍👩‍👧"), .string("nul\u{0}inside"),
        .boolean(false), .boolean(true),
        .date(-978_307_200.5), .date(0), .date(.infinity), .date(.nan),
        .binary(Data()), .binary(Data((0..<300).map { UInt8($0 & 0xFF) })),
        .uuid(Data(repeating: 7, count: 16)), .uuid(Data([1, 2, 3])), .uuid(Data()),
        .uri("https://example.com/é"),
        .object("strata://S/Book/p12"), .object("t0"), .object("t1"), .object("not an ID"),
        .objects(Strata_V1_ObjectIDList.with { $0.ids = ["strata://S/Book/p1"] }),
    ]

    private static func value(_ kind: Strata_V1_Value.OneOf_Kind?) -> Strata_V1_Value {
        var value = Strata_V1_Value()
        value.kind = kind
        return value
    }

    /// A save of `count` inserts varied by `round`: names (one missing or
    /// used twice now and then), entities (one unknown now and then),
    /// configurations, values of `kinds`, merge policies and authors.
    private static func frame(round: Int) -> Strata_V1_ClientFrame {
        Strata_V1_ClientFrame.with { frame in
            frame.requestID = UInt64(round + 1)
            frame.save = Strata_V1_SaveRequest.with { save in
                save.inserts = (0..<(round % 4)).map { i in
                    Strata_V1_InsertedObject.with { insert in
                        if (round + i) % 13 != 0 { insert.temporaryID = round % 17 == 5 ? "t0" : "t\(i)" }
                        insert.entity = [(round + i) % 19 == 0 ? "Nothing" : "Book", "Feedback"][i % 2]
                        switch round % 9 {
                        case 3: insert.configuration = i % 2 == 0 ? "Book" : "Feedback"
                        case 7: insert.configuration = "Elsewhere"
                        default: break
                        }
                        for (k, kind) in kinds.enumerated() where (k * 7 + round + i) % 11 == 0 {
                            insert.values["p\(k)"] = value(kind)
                        }
                    }
                }
                if round % 3 == 1 { save.author = "importer é" }
                switch round % 8 {
                case 1: save.mergePolicy = .overwrite
                case 2: save.mergePolicy = .mergeByPropertyObjectTrump
                case 3: save.mergePolicy = .UNRECOGNIZED(42)
                default: break
                }
            }
        }
    }

    @Test func itTakesWhatTheFullPathTakesAndReadsItAlike() async throws {
        // The check the request fuzz target makes on every input.
        let probe = RequestProbe(coordinator: try await sampleInMemoryContainer().coordinator)
        var taken = 0
        for round in 0..<600 {
            let check = probe.checkInsertScan(payload: try Self.frame(round: round).serializedBytes())
            #expect(check.disagreement == nil, "round \(round)")
            if check.taken { taken += 1 }
        }
        // Both kinds of save were met: taken, and left to the full path.
        #expect(taken > 40)
        #expect(taken < 500)
    }

    @Test func anInsertNamingAnotherGetsItsTemporaryID() async throws {
        let core = quietCore(try await sampleInMemoryContainer().coordinator)
        let frame = Strata_V1_ClientFrame.with { frame in
            frame.requestID = 9
            frame.save = Strata_V1_SaveRequest.with { save in
                save.inserts = [
                    Strata_V1_InsertedObject.with {
                        $0.temporaryID = "book"
                        $0.entity = "Book"
                        $0.values["title"] = PropertyValue.string("A").wire
                    },
                    Strata_V1_InsertedObject.with {
                        $0.temporaryID = "note"
                        $0.entity = "Feedback"
                        $0.values["book"] = Self.value(.object("book"))
                        $0.values["comment"] = PropertyValue.string("first").wire
                    },
                ]
            }
        }
        let bytes: [UInt8] = try frame.serializedBytes()
        let scan = try #require(InsertSaveScan(scanning: ByteBuffer(bytes: bytes), core: core, clientName: "client", identity: nil))
        #expect(scan.names == ["book", "note"])
        #expect(scan.save.inserts[1].values["book"] == .object(scan.save.inserts[0].id))
        #expect(scan.save.inserts[1].values["comment"] == .string("first"))
        #expect(scan.save.author == "client")
    }

    @Test func aServerWithAReadOnlyStoreLeavesEverySaveToTheFullPath() async throws {
        var readOnly = StoreDescription.inMemory(configuration: "Feedback")
        readOnly.isReadOnly = true
        let container = try await PersistentContainer(model: BooksSample.model, storeDescriptions: [.inMemory(configuration: "Book"), readOnly], factory: .standard,
                                                      transformers: BooksSample.transformers, transientRules: BooksSample.transientRules)
        let core = quietCore(container.coordinator)
        let frame = Strata_V1_ClientFrame.with { frame in
            frame.requestID = 3
            frame.save = Strata_V1_SaveRequest.with { save in
                save.inserts = [Strata_V1_InsertedObject.with {
                    $0.temporaryID = "b"
                    $0.entity = "Book"
                }]
            }
        }
        #expect(InsertSaveScan(scanning: ByteBuffer(bytes: try frame.serializedBytes() as [UInt8]), core: core, clientName: "c", identity: nil) == nil)
    }
}
