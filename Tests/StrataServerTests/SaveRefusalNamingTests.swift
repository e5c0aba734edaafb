import StrataModel
import Testing
@testable import StrataServer

/// Temporary IDs in a refused save's messages are replaced by the names
/// the client gave its inserts, in one pass, whatever surrounds them.
@Suite struct SaveRefusalNamingTests {
    @Test func namesEachKnownTemporaryID() {
        let a = ObjectID.temporary(entityName: "Book"), b = ObjectID.temporary(entityName: "Author"), unknown = ObjectID.temporary(entityName: "Book")
        let byURI = [a.uriRepresentation: "a", b.uriRepresentation: "new author"]
        #expect(ServerCore.naming("Book.title of \(a) is mandatory and nil", byURI) == "Book.title of 'a' is mandatory and nil")
        #expect(ServerCore.naming("\(a)\(b), \(a)", byURI) == "'a''new author', 'a'")
        // Not one of the save's: left as it is.
        #expect(ServerCore.naming("points to \(unknown)", byURI) == "points to \(unknown)")
        // Nothing to name, a cut-off ID, the prefix alone.
        #expect(ServerCore.naming("nothing here", byURI) == "nothing here")
        let cut = String(a.uriRepresentation.dropLast(3))
        #expect(ServerCore.naming("ends with \(cut)", byURI) == "ends with \(cut)")
        #expect(ServerCore.naming("strata-temp://", byURI) == "strata-temp://")
        #expect(ServerCore.naming("é \(a) 👩‍👩‍👧", byURI) == "é 'a' 👩‍👩‍👧")
    }
}
