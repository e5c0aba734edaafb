import Testing
import StrataWire

/// `ProtobufReader.text(_:)` accepts exactly the bytes `String(validating:as:)`
/// accepts, and makes the same text of them.
@Suite struct ProtobufReaderTextTests {
    private func agrees(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            ProtobufReader.text(raw) == String(validating: bytes, as: UTF8.self)
        }
    }

    @Test(arguments: [
        [], Array("Book".utf8), Array("x-coredata://A1B2/Book/p42".utf8), [0x00], Array("é€😀".utf8),
        [0xF4, 0x8F, 0xBF, 0xBF],                   // U+10FFFF, the last scalar
        [0xEF, 0xBF, 0xBD],                         // U+FFFD itself
        [0x80],                                     // a lone continuation byte
        [0xC0, 0x80],                               // an overlong NUL
        [0xED, 0xA0, 0x80],                         // a surrogate
        [0xF4, 0x90, 0x80, 0x80],                   // past U+10FFFF
        [0xF0, 0x9F, 0x98],                         // a truncated four-byte sequence: three bytes, as U+FFFD is
        [0xF0, 0x9F, 0x98, 0x41],                   // the same before ASCII
        [0x41, 0xE2, 0x82],                         // a truncated three-byte sequence at the end
        [0xFF], [0xFE, 0xFF],
    ] as [[UInt8]])
    func agreesWithTheStandardLibrary(_ bytes: [UInt8]) {
        #expect(agrees(bytes))
    }

    @Test func agreesOnRandomBytes() {
        // Short sequences over the bytes that matter to UTF-8's rules
        // (U+FFFD's own bytes, EF BF BD, among them).
        var generator = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBD, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
            #expect(agrees(bytes), "bytes \(bytes)")
        }
    }
}
