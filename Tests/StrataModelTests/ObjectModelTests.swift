import Testing
@testable import StrataModel

@Suite struct ObjectModelTests {
    @Test func inheritanceResolvesAttributes() {
        let model = ObjectModel(entities: [
            EntityDescription(name: "Base", isAbstract: true, attributes: [.init(name: "id", type: .integer64)]),
            EntityDescription(name: "Child", parent: "Base", attributes: [.init(name: "name", type: .string)]),
        ])
        #expect(model.attributes(of: "Child").map(\.name) == ["id", "name"])
        #expect(model.subentities(of: "Base") == ["Child"])
        #expect(model.rootEntityName(of: "Child") == "Base")
        #expect(model.hierarchy(of: "Base") == ["Base", "Child"])
    }

    @Test func parentCycleDoesNotHang() {
        let model = ObjectModel(entities: [
            EntityDescription(name: "A", parent: "B"),
            EntityDescription(name: "B", parent: "A"),
        ])
        #expect(model.ancestry(of: "A").count == 2)
    }

    @Test func objectIDRoundTrips() throws {
        let id = ObjectID(storeIdentifier: "ABC", entityName: "Book", key: .permanent(42))
        #expect(id.uriRepresentation == "strata://ABC/Book/p42")
        #expect(ObjectID(uriRepresentation: id.uriRepresentation) == id)
        let temp = ObjectID.temporary(entityName: "Book")
        #expect(ObjectID(uriRepresentation: temp.uriRepresentation) == temp)
        #expect(ObjectID(uriRepresentation: "strata://x/Book/q1") == nil)
        // The one-pass parser accepts exactly the printed form.
        #expect(ObjectID(uriRepresentation: "strata://6461600E-813D/Crème/p7")?.entityName == "Crème")
        #expect(ObjectID(uriRepresentation: "strata://x/Book/p-3")?.primaryKey == -3)
        for malformed in ["strata://x/Book/p", "strata://x/Book/p1/extra", "strata://x//p1", "strata://x/Book", "strata://xBookp1",
                          "strata://x/Book/p1x", "strata://x/Book/p99999999999999999999", "strata:/x/Book/p1", "strata-temp://Book/tnot-a-uuid", ""] {
            #expect(ObjectID(uriRepresentation: malformed) == nil, "\(malformed)")
        }
    }
}
