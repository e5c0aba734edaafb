import Foundation
import StrataModel

/// `MATCHES`: whole-string ICU regular expressions through
/// `NSRegularExpression`, compiled once per (pattern, options) and cached.
/// Shared by the evaluator and the `strata_matches` SQL function.
///
/// The subject must match in full (ICU `matches()` semantics, as
/// NSPredicate): the pattern is checked on its own first, so that an
/// invalid one is reported as written, then compiled as `\A(?:pattern)\z`.
/// `[c]` compiles with `.caseInsensitive`; `[d]` folds the subject only
/// (callers do that). An invalid pattern is a ``StrataError`` with code
/// ``StrataError/Code/predicateType`` naming the pattern.
public enum RegexCache {
    private static let cache = PatternCache<Result<NSRegularExpression, StrataError>>(capacity: 64)

    /// The compiled whole-string expression for `pattern`, or the error
    /// describing why it is invalid.
    public static func expression(_ pattern: String, caseInsensitive: Bool) throws(StrataError) -> NSRegularExpression {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        let result = cache.value(for: key) { _ in compile(pattern, caseInsensitive: caseInsensitive) }
        return try result.get()
    }

    /// Whether all of `subject` matches `pattern`.
    public static func matches(_ subject: String, pattern: String, caseInsensitive: Bool) throws(StrataError) -> Bool {
        let expression = try expression(pattern, caseInsensitive: caseInsensitive)
        return matches(subject, expression)
    }

    /// Whether all of `subject` matches an expression from ``expression(_:caseInsensitive:)``.
    public static func matches(_ subject: String, _ expression: NSRegularExpression) -> Bool {
        let range = NSRange(location: 0, length: subject.utf16.count)
        return expression.firstMatch(in: subject, options: [], range: range) != nil
    }

    /// Checks a pattern without matching anything (for compile-time validation).
    public static func validate(_ pattern: String, caseInsensitive: Bool) throws(StrataError) {
        _ = try expression(pattern, caseInsensitive: caseInsensitive)
    }

    private static func compile(_ pattern: String, caseInsensitive: Bool) -> Result<NSRegularExpression, StrataError> {
        let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
        do {
            _ = try NSRegularExpression(pattern: pattern, options: options)
            return .success(try NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: options))
        } catch {
            return .failure(StrataError(.predicateType, "invalid regular expression '\(pattern)' in MATCHES"))
        }
    }
}
