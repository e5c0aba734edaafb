import Foundation
import Testing
@testable import StrataWire

/// A decimal's wire text is exactly its `description`, however it is made.
@Suite struct DecimalWireTextTests {
    @Test func theLayoutIsReadOnThisFoundation() {
        // Not a requirement (other Foundations fall back to `description`),
        // but on the one the project ships with, the fast path is taken.
        #expect(Decimal.CompactLayout.holds)
    }

    @Test(arguments: ["0", "1", "-1", "12.50", "-0.05", "0.000", "1e5", "-3e20", "7e-20", "65536",
                      "18446744073709551615", "18446744073709551616", "-98765.4321",
                      "123456789012345678901234567890.12345678", "99999999999999999999999999999999999999"])
    func edgeValuesMatchTheirDescription(text: String) throws {
        let decimal = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")))
        #expect(decimal.wireText == decimal.description)
    }

    @Test func randomValuesMatchTheirDescription() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let significand = UInt64.random(in: 0...UInt64.max, using: &generator) >> UInt64.random(in: 0...63, using: &generator)
            let exponent = Int.random(in: -40...40, using: &generator)
            let decimal = Decimal(sign: Bool.random(using: &generator) ? .minus : .plus, exponent: exponent, significand: Decimal(significand))
            #expect(decimal.wireText == decimal.description, "significand \(significand), exponent \(exponent)")
        }
    }

    @Test func nanFallsBackToDescription() {
        #expect(Decimal.nan.wireText == Decimal.nan.description)
    }
}
