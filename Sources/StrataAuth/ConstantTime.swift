/// Comparison of secrets whose time does not depend on where they differ.
package enum ConstantTime {
    /// Whether `a` and `b` have the same UTF-8 bytes, comparing every byte
    /// of the longer one whatever the first difference (the length of the
    /// expected secret is not hidden, its content is).
    package static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(truncatingIfNeeded: x.count ^ y.count) | (x.count == y.count ? 0 : 1)
        let count = max(x.count, y.count)
        for i in 0..<count {
            let p = i < x.count ? x[i] : 0
            let q = i < y.count ? y[i] : 0
            difference |= p ^ q
        }
        return difference == 0
    }

    /// Whether `a` and `b` hold the same bytes, in a time that depends on
    /// their lengths only.
    package static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count) | (a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }
}
