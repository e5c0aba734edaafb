import Foundation
import Testing
@testable import StrataQuery

@Suite struct StringFoldingTests {
    @Test func foldsCaseAndDiacritics() {
        #expect(StringFolding.fold("Crème Brûlée", [.caseInsensitive, .diacriticInsensitive]) == "creme brulee")
        #expect(StringFolding.fold("ABC", [.caseInsensitive]) == "abc")
        #expect(StringFolding.fold("Éa", [.diacriticInsensitive]) == "Ea")
        #expect(StringFolding.fold("Éa", []) == "Éa")
    }

    /// The Latin table path folds exactly as Foundation does, alone and
    /// next to ASCII and other Latin scalars.
    @Test func latinTableMatchesFoundation() {
        func foundation(_ text: String) -> String {
            text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        }
        var scalars: [Unicode.Scalar] = []
        for value in UInt32(0x41)..<0x180 {
            if let scalar = Unicode.Scalar(value), value < 0x5B || value >= 0x80 { scalars.append(scalar) }
        }
        for (i, scalar) in scalars.enumerated() {
            let next = scalars[(i * 7 + 3) % scalars.count]
            var text = "Ab "
            text.unicodeScalars.append(scalar)
            text.unicodeScalars.append(next)
            text += " Z"
            #expect(StringFolding.canonical(text) == foundation(text), "U+\(String(scalar.value, radix: 16))")
        }
        for text in ["Crème Brûlée ÉTÉ 42", "ŒUVRE œuvre", "Straße", "ŁÓDŹ", "naïve café", "Ça va"] {
            #expect(StringFolding.canonical(text) == foundation(text), "\(text)")
        }
    }
}
