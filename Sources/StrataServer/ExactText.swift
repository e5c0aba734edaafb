/// A text compared and hashed by its UTF-8 bytes, for cache keys: `String`'s
/// own equality is canonical equivalence ("é" precomposed equals "e" and a
/// combining accent), while the predicate parser, and SQLite after it, keep
/// the exact characters, so two such texts are different predicates.
struct ExactText: Hashable, Sendable {
    let text: String

    static func == (lhs: ExactText, rhs: ExactText) -> Bool {
        lhs.text.utf8.elementsEqual(rhs.text.utf8)
    }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
