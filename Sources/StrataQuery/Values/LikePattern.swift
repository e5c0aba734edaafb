import Foundation
import Synchronization

/// A compiled `LIKE` pattern: `*` matches any run of Characters (possibly
/// empty), `?` exactly one Character, `\` makes the next Character literal,
/// and the whole subject must match. A literal pattern Character matches a
/// subject Character with the same Unicode scalars (no canonical
/// equivalence, like every other string comparison here). Folding for
/// `[c]`/`[d]` is applied by callers to both sides before matching.
public struct LikePattern: Sendable, Hashable {
    /// One element of a compiled pattern.
    package enum Token: Sendable, Hashable {
        /// One literal Character, as its UTF-8 bytes.
        case literal([UInt8])
        /// `?`
        case one
        /// `*` (consecutive stars are merged)
        case star
    }

    /// The pattern's elements, in order.
    package let tokens: [Token]
    /// Whether every literal is a single ASCII byte other than CR (so an
    /// ASCII subject can be matched byte by byte).
    private let asciiTokens: [UInt8?]?

    /// Compiles `pattern`. A trailing lone `\` stands for itself.
    public init(_ pattern: String) {
        var tokens: [Token] = []
        var escaped = false
        for character in pattern {
            if escaped {
                tokens.append(.literal(Array(String(character).utf8)))
                escaped = false
                continue
            }
            switch character {
            case "\\": escaped = true
            case "*": if tokens.last != .star { tokens.append(.star) }
            case "?": tokens.append(.one)
            default: tokens.append(.literal(Array(String(character).utf8)))
            }
        }
        if escaped { tokens.append(.literal([UInt8(ascii: "\\")])) }
        self.tokens = tokens
        var ascii: [UInt8?] = []
        var allASCII = true
        for token in tokens {
            switch token {
            case .literal(let bytes):
                if bytes.count == 1, bytes[0] < 0x80, bytes[0] != 0x0D { ascii.append(bytes[0]) } else { allASCII = false }
            case .one: ascii.append(nil)
            case .star: ascii.append(nil)
            }
        }
        self.asciiTokens = allASCII ? ascii : nil
    }

    /// Whether the whole `subject` matches.
    public func matches(_ subject: String) -> Bool {
        var subject = subject
        if let asciiTokens {
            let fast: Bool? = subject.withUTF8 { bytes in
                // ASCII without CR: every byte is one Character.
                for byte in bytes where byte >= 0x80 || byte == 0x0D { return nil }
                return matchBytes(bytes, asciiTokens)
            }
            if let fast { return fast }
        }
        return matchCharacters(subject)
    }

    private func matchBytes(_ s: UnsafeBufferPointer<UInt8>, _ ascii: [UInt8?]) -> Bool {
        var p = 0, i = 0
        var starP = -1, starI = 0
        let n = tokens.count
        while i < s.count {
            if p < n {
                switch tokens[p] {
                case .one:
                    p += 1; i += 1; continue
                case .star:
                    starP = p; starI = i; p += 1; continue
                case .literal:
                    if ascii[p] == s[i] { p += 1; i += 1; continue }
                }
            }
            guard starP >= 0 else { return false }
            p = starP + 1
            starI += 1
            i = starI
        }
        while p < n, tokens[p] == .star { p += 1 }
        return p == n
    }

    private func matchCharacters(_ subject: String) -> Bool {
        let utf8 = subject.utf8
        var p = 0
        var i = subject.startIndex
        var starP = -1
        var starI = subject.startIndex
        let n = tokens.count
        let end = subject.endIndex
        while i < end {
            if p < n {
                switch tokens[p] {
                case .one:
                    p += 1; i = subject.index(after: i); continue
                case .star:
                    starP = p; starI = i; p += 1; continue
                case .literal(let bytes):
                    let next = subject.index(after: i)
                    if utf8[i..<next].elementsEqual(bytes) { p += 1; i = next; continue }
                }
            }
            guard starP >= 0 else { return false }
            p = starP + 1
            starI = subject.index(after: starI)
            i = starI
        }
        while p < n, tokens[p] == .star { p += 1 }
        return p == n
    }
}

extension LikePattern {
    /// A small shared cache of compiled patterns, for the SQL function that
    /// receives the pattern as text on every row.
    static let cache = PatternCache<LikePattern>(capacity: 128)

    /// Whether `subject` matches `pattern` (compiled once and cached).
    public static func matches(_ subject: String, pattern: String) -> Bool {
        cache.value(for: pattern) { LikePattern($0) }.matches(subject)
    }
}
