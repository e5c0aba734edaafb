import Foundation
import StrataModel

/// `BEGINSWITH`, `ENDSWITH` and `CONTAINS` on Unicode scalars (UTF-8 bytes),
/// after ``StringFolding``. Shared by the evaluator and the `strata_strop`
/// SQL function.
///
/// Byte matching of valid UTF-8 is scalar matching: a needle that starts
/// with a lead byte can only match at a scalar boundary. An empty needle
/// matches every subject.
public enum StringOperators {
    /// The three substring operators, with the stable numbers the SQL
    /// function `strata_strop(op, subject, needle)` takes.
    public enum Operator: Int, Sendable, Hashable {
        /// `BEGINSWITH`
        case beginsWith = 1
        /// `ENDSWITH`
        case endsWith = 2
        /// `CONTAINS`
        case contains = 3

        /// The operator for a comparison operator, if it is one of the three.
        public init?(_ op: ComparisonOperator) {
            switch op {
            case .beginsWith: self = .beginsWith
            case .endsWith: self = .endsWith
            case .contains: self = .contains
            default: return nil
            }
        }
    }

    /// Applies `op` to already folded strings.
    public static func evaluate(_ op: Operator, _ subject: String, _ needle: String) -> Bool {
        var subject = subject
        var needle = needle
        return subject.withUTF8 { s in
            needle.withUTF8 { n in
                switch op {
                case .beginsWith: hasPrefix(s, n)
                case .endsWith: hasSuffix(s, n)
                case .contains: contains(s, n)
                }
            }
        }
    }

    /// Byte prefix test.
    static func hasPrefix(_ s: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>) -> Bool {
        guard n.count <= s.count else { return false }
        guard n.count > 0, let ps = s.baseAddress, let pn = n.baseAddress else { return true }
        return memcmp(ps, pn, n.count) == 0
    }

    /// Byte suffix test.
    static func hasSuffix(_ s: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>) -> Bool {
        guard n.count <= s.count else { return false }
        guard n.count > 0, let ps = s.baseAddress, let pn = n.baseAddress else { return true }
        return memcmp(ps + (s.count - n.count), pn, n.count) == 0
    }

    /// Byte substring test.
    static func contains(_ s: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>) -> Bool {
        guard n.count <= s.count else { return false }
        guard n.count > 0, let ps = s.baseAddress, let pn = n.baseAddress else { return true }
        let first = pn.pointee
        var i = 0
        let last = s.count - n.count
        while i <= last {
            // memchr finds the next candidate quickly.
            guard let hit = memchr(ps + i, Int32(first), last - i + 1) else { return false }
            let position = ps.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if memcmp(ps + position, pn, n.count) == 0 { return true }
            i = position + 1
        }
        return false
    }
}
