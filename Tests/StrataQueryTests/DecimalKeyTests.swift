import Foundation
import Testing
@testable import StrataQuery

@Suite struct DecimalKeyTests {
    /// A deterministic SplitMix64 stream.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ range: ClosedRange<Int>) -> Int {
            range.lowerBound + Int(next() % UInt64(range.count))
        }
    }

    /// Random decimals: up to 38 significant digits, exponents across
    /// Decimal's range, both signs, zeros, and near neighbours.
    static func randomDecimals(count: Int, seed: UInt64) -> [Decimal] {
        var random = Random(state: seed)
        var values: [Decimal] = [0, 1, -1, Decimal(string: "0.5")!, Decimal(string: "-0.5")!, Decimal(string: "-0.51")!, Decimal(string: "0.51")!]
        while values.count < count {
            let digits = random.int(1...38)
            var text = ""
            for i in 0..<digits { text += String(random.int((i == 0 ? 1 : 0)...9)) }
            let exponent: Int
            switch random.int(0...3) {
            case 0: exponent = random.int(-128...(-60))
            case 1: exponent = random.int(60...(127 - digits))
            default: exponent = random.int(-20...20)
            }
            let negative = random.next() % 2 == 0
            guard let value = Decimal(string: (negative ? "-" : "") + text + "e" + String(exponent)) else { continue }
            values.append(value)
            if random.int(0...4) == 0 {
                // A neighbour differing in the last digit, and the same value at another scale.
                if let neighbour = Decimal(string: (negative ? "-" : "") + text + "1e" + String(exponent - 1)) { values.append(neighbour) }
                if let scaled = Decimal(string: (negative ? "-" : "") + text + "0e" + String(exponent - 1)) { values.append(scaled) }
            }
        }
        return values
    }

    @Test func documentedShape() throws {
        #expect(DecimalKey.encode(Decimal.zero) == "1")
        #expect(DecimalKey.encode(Decimal(string: "0.5")!) == "25005")
        #expect(DecimalKey.encode(Decimal(string: "12.34")!) == "25021234")
        #expect(DecimalKey.encode(Decimal(string: "-0.5")!) == "04994~")
        #expect(DecimalKey.encode(Decimal(string: "-0.51")!) == "049948~")
        #expect(DecimalKey.encode(Decimal(string: "7.50")!) == DecimalKey.encode(Decimal(string: "7.5")!))
        #expect(DecimalKey.encode(Int64(0)) == "1")
        #expect(DecimalKey.encode(Int64(-1200)) == DecimalKey.encode(Decimal(-1200)))
        #expect(DecimalKey.encode(Int64.min) == DecimalKey.encode(Decimal(string: "-9223372036854775808")!))
        #expect(DecimalKey.encode(0.1) == DecimalKey.encode(Decimal(string: "0.1")!))
        #expect(DecimalKey.encode(Double.nan) == nil)
        #expect(DecimalKey.encode(Double.infinity) == nil)
        #expect(DecimalKey.encode(Decimal.nan) == nil)
    }

    @Test func orderMatchesDecimalOrder() throws {
        let values = Self.randomDecimals(count: 4000, seed: 42)
        let keyed = values.map { ($0, DecimalKey.encode($0) ?? "") }
        var mismatches: [String] = []
        var random = Random(state: 7)
        for _ in 0..<40000 {
            let (a, ka) = keyed[random.int(0...(keyed.count - 1))]
            let (b, kb) = keyed[random.int(0...(keyed.count - 1))]
            let byKey = ka.utf8.lexicographicallyPrecedes(kb.utf8) ? -1 : (ka == kb ? 0 : 1)
            let byValue = a < b ? -1 : (a == b ? 0 : 1)
            if byKey != byValue, mismatches.count < 5 { mismatches.append("\(a) vs \(b): key \(byKey), value \(byValue)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        // Sorting by key sorts by value.
        let sortedByKey = keyed.sorted { $0.1.utf8.lexicographicallyPrecedes($1.1.utf8) }.map(\.0)
        for (x, y) in zip(sortedByKey, sortedByKey.dropFirst()) {
            #expect(!(y < x), "\(x) sorts before \(y)")
        }
    }

    /// Keys short enough for the integer path decode to the very bytes
    /// the text parser gives.
    @Test func compactDecodingMatchesTextParsing() throws {
        #expect(DecimalKey.isCompactDecodingVerified)
        var random = Random(state: 7)
        for _ in 0..<2000 {
            let digits = Int(random.next() % 18) + 1
            var text = random.next() % 2 == 0 ? "-" : ""
            for i in 0..<digits { text += String(i == 0 ? random.next() % 9 + 1 : random.next() % 10) }
            text += "e\(Int(random.next() % 60) - 30)"
            let value = try #require(Decimal(string: text, locale: nil))
            let key = try #require(DecimalKey.encode(value))
            let decoded = try #require(DecimalKey.decode(key))
            #expect(decoded == value, "\(text)")
            let parsed = try #require(Decimal(string: "\(value)", locale: nil))
            #expect(decoded.description == parsed.description, "\(text)")
        }
    }

    @Test func roundTripsExactly() throws {
        for value in Self.randomDecimals(count: 3000, seed: 99) {
            let key = try #require(DecimalKey.encode(value))
            let decoded = try #require(DecimalKey.decode(key), "key \(key) of \(value)")
            #expect(decoded == value, "\(value) → \(key) → \(decoded)")
            #expect(DecimalKey.encode(decoded) == key)
        }
        let extremes = ["340282366920938463463374607431768211455", "-340282366920938463463374607431768211455", "1e-128", "-1e127", "9999999999999999999999999999999999999e-128"]
        for text in extremes {
            let value = try #require(Decimal(string: text))
            let key = try #require(DecimalKey.encode(value))
            #expect(DecimalKey.decode(key) == value, "\(text)")
        }
    }

    @Test func layoutReaderIsVerifiedAndAgreesWithText() {
        #expect(DecimalLayout.isVerified)
        for value in Self.randomDecimals(count: 500, seed: 5) {
            let fast = DecimalKey.normalizedParts(of: value)
            let slow = DecimalKey.textParts(of: value)
            #expect(fast?.negative == slow?.negative && fast?.exponent == slow?.exponent && fast?.digits == slow?.digits, "\(value)")
        }
    }

    /// `writeText(ofKey:into:)` over `key`'s bytes into `capacity` bytes.
    private static func text(ofKey key: String, capacity: Int = 256) -> String? {
        var key = key
        return key.withUTF8 { keyBytes in
            withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer in
                DecimalKey.writeText(ofKey: UnsafeRawBufferPointer(keyBytes), into: buffer).map { String(decoding: buffer[..<$0], as: UTF8.self) }
            }
        }
    }

    @Test("A key's text, written from the key, is the decoded decimal's description")
    func textFromKeyIsTheDescription() throws {
        var written = 0
        let values = Self.randomDecimals(count: 3000, seed: 11)
            + ["0", "12.34", "-12.34", "0.005", "-0.005", "1200", "-1200", "1e37", "9999999999999999999999999999999999999e-128"].compactMap { Decimal(string: $0) }
        for value in values {
            let key = try #require(DecimalKey.encode(value))
            let decoded = try #require(DecimalKey.decode(key))
            guard let text = Self.text(ofKey: key) else {
                // Only more than 38 digits, or a text past the 256 bytes, is
                // left to the caller.
                let digits = key.utf8.count - 4 - (key.hasSuffix("~") ? 1 : 0)
                #expect(digits > 38 || decoded.description.utf8.count > 256, "\(value) → \(key)")
                continue
            }
            #expect(text == decoded.description, "\(value) → \(key)")
            written += 1
        }
        #expect(written > values.count / 2)
        // Too little room: nil, not a cut text.
        #expect(Self.text(ofKey: try #require(DecimalKey.encode(Decimal(string: "-12.34") ?? 0)), capacity: 5) == nil)
        #expect(Self.text(ofKey: try #require(DecimalKey.encode(Decimal(string: "-12.34") ?? 0)), capacity: 6) == "-12.34")
    }

    @Test func rejectsMalformedKeys() {
        for key in ["", "3", "10", "2", "2500", "25000", "25050", "0499~", "04994", "0abc5~", "2x005", "1 ", "250012a", "0499x~"] {
            #expect(Self.text(ofKey: key) == nil, "\(key)")
        }
        for key in ["", "3", "10", "2", "2500", "25000", "25050", "0499~", "04994", "0abc5~", "2x005", "1 "] {
            #expect(DecimalKey.decode(key) == nil, "\(key)")
        }
    }

    @Test func integerAndDoubleKeysAgreeWithDecimalKeys() {
        var random = Random(state: 3)
        for _ in 0..<2000 {
            let v = Int64(bitPattern: random.next()) >> Int64(random.int(0...62))
            #expect(DecimalKey.encode(v) == DecimalKey.encode(Decimal(v)), "\(v)")
            let d = Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF) * (random.next() % 2 == 0 ? 1 : -1)
            if let decimal = DecimalConversion.decimal(from: d) {
                #expect(DecimalKey.encode(d) == DecimalKey.encode(decimal))
            }
        }
    }
}
