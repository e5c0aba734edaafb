/// Comparison of secrets whose time does not depend on where they differ.
enum ConstantTime {
    /// Whether `a` and `b` have the same UTF-8 bytes, comparing every byte
    /// of the longer one whatever the first difference (the length of the
    /// expected secret is not hidden, its content is).
    static func equal(_ a: String, _ b: String) -> Bool {
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
}
