import Testing
@testable import StrataQuery

@Suite struct StringFoldingTests {
    @Test func foldsCaseAndDiacritics() {
        #expect(StringFolding.fold("Crème Brûlée", [.caseInsensitive, .diacriticInsensitive]) == "creme brulee")
        #expect(StringFolding.fold("ABC", [.caseInsensitive]) == "abc")
        #expect(StringFolding.fold("Éa", [.diacriticInsensitive]) == "Ea")
        #expect(StringFolding.fold("Éa", []) == "Éa")
    }
}
