/// A correctly rounded sum of Doubles (Shewchuk's algorithm, as in Python's
/// `math.fsum`): the result is the exact sum rounded once, so it does not
/// depend on the order of the terms.
///
/// `@sum` and `@avg` of floating-point attributes use it in memory and, as
/// the `strata_fsum` aggregate, in SQL, where rows come in whatever order
/// the query plan picks: a naive running sum could then differ in the last
/// bit from the in-memory one.
public struct ExactDoubleSum: Sendable {
    private var partials: [Double] = []
    private var special: Double = 0
    private var hasSpecial = false
    private var overflowed: Double = 0

    /// Number of terms added.
    public private(set) var count = 0

    /// An empty sum (0).
    public init() {}

    /// Adds a term.
    public mutating func add(_ value: Double) {
        count += 1
        guard value.isFinite else {
            // Infinities and NaN: their plain sum decides (inf + -inf = NaN).
            special += value
            hasSpecial = true
            return
        }
        var x = value
        var i = 0
        for j in partials.indices {
            var y = partials[j]
            if abs(x) < abs(y) { swap(&x, &y) }
            let hi = x + y
            let lo = y - (hi - x)
            if lo != 0 {
                partials[i] = lo
                i += 1
            }
            x = hi
        }
        if !x.isFinite {
            // Intermediate overflow of finite terms: the sum is ±infinity.
            overflowed += x
            partials.removeAll(keepingCapacity: true)
            return
        }
        partials.removeSubrange(i...)
        partials.append(x)
    }

    /// The correctly rounded sum (0 when empty).
    public var value: Double {
        if hasSpecial { return special + overflowed }
        if overflowed != 0 { return overflowed }
        var n = partials.count
        guard n > 0 else { return 0 }
        n -= 1
        var hi = partials[n]
        var lo = 0.0
        while n > 0 {
            let x = hi
            n -= 1
            let y = partials[n]
            hi = x + y
            let yr = hi - x
            lo = y - yr
            if lo != 0 { break }
        }
        // Round half-even correctly when the remaining partials push the
        // half-way case one way.
        if n > 0, (lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0) {
            let y = lo * 2
            let x = hi + y
            let yr = x - hi
            if y == yr { hi = x }
        }
        return hi
    }
}
