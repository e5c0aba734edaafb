import StrataModel
import Testing
@testable import StrataServer

/// The get path's reader of permanent IDs: where it answers, it answers
/// what the general reader does, holding the store's own identifier.
@Suite struct PermanentIDReaderTests {
    private static let store = "5A1B2C3D-0000-4000-8000-00000000ABCD"
    private static let reader = PermanentIDReader(storeIdentifiers: [store, "other", "with/slash", ""])

    @Test("The common ID is read, with the store's own identifier string")
    func theCommonIDIsRead() throws {
        let id = try #require(Self.reader.permanentID("strata://\(Self.store)/Book/p123"))
        #expect(id == ObjectID(storeIdentifier: Self.store, entityName: "Book", key: .permanent(123)))
        var made = id.storeIdentifier, kept = Self.store
        let madeBase = made.withUTF8 { $0.baseAddress }, keptBase = kept.withUTF8 { $0.baseAddress }
        #expect(madeBase == keptBase)
        #expect(Self.reader.permanentID("strata://other/B/p0") == ObjectID(storeIdentifier: "other", entityName: "B", key: .permanent(0)))
    }

    @Test("Wherever it answers, it answers what ObjectID(uriRepresentation:) reads", arguments: [
        "strata://\(store)/Book/p1",
        "strata://\(store)/Book/p007",
        "strata://\(store)/Book/p999999999999999999",
        "strata://\(store)/Book/p9223372036854775807",
        "strata://\(store)/Book/p99999999999999999999",
        "strata://\(store)/Book/p-5",
        "strata://\(store)/Book/p+5",
        "strata://\(store)/Book/p",
        "strata://\(store)/Book/q5",
        "strata://\(store)/Book/p5/",
        "strata://\(store)/Book/p5x",
        "strata://\(store)//p5",
        "strata://\(store)/Bo/ok/p5",
        "strata://\(store)/Bücher/p5",
        "strata://\(store)/Book",
        "strata://\(store)/",
        "strata://\(store)",
        "strata://other/Book/p5",
        "strata://othe/Book/p5",
        "strata://others/Book/p5",
        "strata://unknown/Book/p5",
        "strata://with/slash/Book/p5",
        "strata:///Book/p5",
        "strata-temp://Book/t8C3E5D7A-1111-4222-8333-444455556666",
        "Strata://\(store)/Book/p5",
        "",
        "strata://",
    ])
    func agreesWithTheGeneralReader(text: String) {
        let general = ObjectID(uriRepresentation: text)
        if let read = Self.reader.permanentID(text) {
            #expect(read == general, "\(text)")
        }
    }

    @Test("It answers every plain permanent ID of a known store")
    func answersPlainIDs() {
        for text in ["strata://\(Self.store)/Book/p1", "strata://\(Self.store)/Feedback/p123456789012345678", "strata://other/E/p42"] {
            #expect(Self.reader.permanentID(text) != nil, "\(text)")
        }
        for text in ["strata://unknown/Book/p5", "strata://with/slash/Book/p5", "strata://\(Self.store)/Book/p1234567890123456789"] {
            #expect(Self.reader.permanentID(text) == nil, "\(text)")
        }
    }
}
