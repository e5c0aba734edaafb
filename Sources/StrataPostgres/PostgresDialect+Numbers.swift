import StrataModel
import StrataQuery

/// The evaluator's arithmetic on Doubles, written in PostgreSQL's SQL.
extension PostgresDialect {
    /// A Double as ``DecimalConversion`` converts it: the Decimal of
    /// Swift's shortest round-tripping text, NULL for NaN and infinities
    /// and where Foundation's `Decimal(string:)` finds no Decimal (the
    /// text's last digit at a power of ten outside -128…127: `1e-129`,
    /// `1.5e-128`, `1e+128`), which `numeric` would hold.
    ///
    /// Not through PostgreSQL's own text, which is not always Swift's (at
    /// half-unit ties, which reading back rounds to even, and at powers of
    /// two, whose interval of texts that read back is narrower below):
    /// for 1, 2… 17 significant digits, the two texts either side of the
    /// exact value are tried, and the first length at which one reads back
    /// as the same Double gives the nearer of those that do (on a tie, the
    /// one whose last digit is even), as Swift's shortest does. Each derived
    /// table is fenced with `OFFSET 0`, so that PostgreSQL computes its
    /// value once instead of copying the expression (an aggregate's
    /// subquery, say) into every use.
    static func doubleAsDecimal(_ expression: SQLFragment) -> SQLFragment {
        let lengths = "SELECT n, e.v, n - 1 - e.m AS s, trunc(e.v, n - 1 - e.m) AS t FROM generate_series(1, 17) AS n, "
            + "(SELECT \(exactValue("d.x")) AS v, CAST(floor(log(abs(d.x))) AS integer) AS m OFFSET 0) AS e"
        let candidates = "SELECT g.n, g.s, g.v, c.c FROM (\(lengths) OFFSET 0) AS g, "
            + "LATERAL (VALUES (g.t), (g.t + sign(g.v) * \(powerOfTen("-g.s")))) AS c(c)"
        let readsBack = "CASE WHEN abs(k.c) < \(overflowLimit) THEN CAST(k.c AS double precision) = d.x ELSE FALSE END"
        let shortest = "(SELECT CASE WHEN k.s BETWEEN -127 AND 128 THEN k.c END FROM (\(candidates) OFFSET 0) AS k WHERE \(readsBack) "
            + "ORDER BY k.n, abs(k.c - k.v), mod(abs(k.c) * \(powerOfTen("k.s")), 2) LIMIT 1)"
        return "(SELECT CASE WHEN d.x IN (\(specials)) THEN NULL WHEN d.x = 0 THEN CAST(0 AS numeric) ELSE \(shortest) END FROM (SELECT CAST("
            + expression + " AS double precision) AS x OFFSET 0) AS d)"
    }

    /// 10 to the integer SQL expression `exponent`, exactly, as a product of
    /// two halves (PostgreSQL before 15 reads no exponent past ±1000).
    static func powerOfTen(_ exponent: String) -> String {
        "(CAST('1e' || ((\(exponent)) / 2) AS numeric) * CAST('1e' || ((\(exponent)) - (\(exponent)) / 2) AS numeric))"
    }

    /// The smallest `numeric` that rounds to an infinity: 2^1024 - 2^970.
    static let overflowLimit = "(power(CAST(2 AS numeric), 1024) - power(CAST(2 AS numeric), 970))"

    /// The exact `numeric` value of a finite Double column (NULL for NaN,
    /// infinities and NULL): its bits read as sign, exponent and
    /// significand, and the significand times the power of two written
    /// exactly (`2^k`, or `5^-k` shifted by `k` decimal places).
    static func exactValue(_ column: String) -> String {
        let bits = "CAST(CAST('x' || encode(float8send(\(column)), 'hex') AS bit(64)) AS bigint)"
        let biased = "((\(bits) >> 52) & 2047)"
        let fraction = "(\(bits) & 4503599627370495)"
        let significand = "CAST(CASE WHEN \(biased) = 0 THEN \(fraction) ELSE \(fraction) + 4503599627370496 END AS numeric)"
        let power = "(CASE WHEN \(biased) = 0 THEN -1074 ELSE \(biased) - 1075 END)"
        let magnitude = "(CASE WHEN \(power) >= 0 THEN \(significand) * power(CAST(2 AS numeric), \(power))"
            + " ELSE \(significand) * power(CAST(5 AS numeric), -\(power)) * \(powerOfTen(power)) END)"
        return "(CASE WHEN \(column) IN (\(specials)) THEN NULL WHEN \(bits) < 0 THEN -\(magnitude) ELSE \(magnitude) END)"
    }

    /// NaN and the infinities, as `double precision` literals.
    static let specials = "CAST('NaN' AS double precision), CAST('Infinity' AS double precision), CAST('-Infinity' AS double precision)"

    /// ``ExactDoubleSum``'s value as an aggregate: the exact sum of the
    /// finite values rounded once to the nearest Double (PostgreSQL reads
    /// `numeric` into a Double with `strtod`, correctly rounded; from
    /// 2^1024 - 2^970 on, the sum rounds to an infinity), plus the sum of
    /// NaNs and infinities in plain arithmetic (`inf + -inf` is NaN, which
    /// is NULL as the evaluator has it); 0 when there is no value.
    static func exactDoubleSum(_ column: String) -> String {
        let sum = "COALESCE(SUM(\(exactValue(column))), 0)"
        let rounded = "(CASE WHEN \(sum) >= \(overflowLimit) THEN CAST('Infinity' AS double precision)"
            + " WHEN \(sum) <= -\(overflowLimit) THEN CAST('-Infinity' AS double precision) ELSE CAST(\(sum) AS double precision) END)"
        return "NULLIF(COALESCE(SUM(CASE WHEN \(column) IN (\(specials)) THEN \(column) END), 0) + \(rounded), CAST('NaN' AS double precision))"
    }

    /// The evaluator's `@avg` of Doubles: the exact sum divided by the
    /// count in Double arithmetic; NULL without values. PostgreSQL fails a
    /// division whose result underflows to 0, so a sum below 2^-1020
    /// (8.900295434028806e-308, whose
    /// quotient may be subnormal) is divided exactly in `numeric` instead
    /// (to 1,100 places, past the 1,075 that any tie between two subnormals
    /// needs) and read back with `strtod`, ties to even as Double division
    /// has them; at or below 2^-1075 the quotient is 0.
    static func exactDoubleAverage(_ column: String) -> String {
        let quotient = "(div(\(exactValue("a.s")) * \(powerOfTen("1100")), a.c) * \(powerOfTen("-1100")))"
        let half = "(power(CAST(5 AS numeric), 1075) * \(powerOfTen("-1075")))"
        let tiny = "(SELECT CASE WHEN abs(q.q) <= \(half) THEN CAST(0 AS double precision) ELSE CAST(q.q AS double precision) END FROM (SELECT \(quotient) AS q OFFSET 0) AS q)"
        return "(SELECT CASE WHEN a.c IS NULL OR a.s IS NULL THEN NULL WHEN a.s IN (\(specials)) OR a.s = 0 OR abs(a.s) >= CAST('8.900295434028806e-308' AS double precision) THEN a.s / a.c ELSE \(tiny) END"
            + " FROM (SELECT \(exactDoubleSum(column)) AS s, NULLIF(COUNT(\(column)), 0) AS c OFFSET 0) AS a)"
    }

    /// A `numeric` cut as ``DecimalAccumulator`` cuts an exact sum: the
    /// leading digits whose number fits in Foundation's 128-bit significand
    /// (39 when they do, else 38), the rest dropped toward zero; NULL when
    /// dropping integer digits would take the exponent past 127.
    static func cutToDecimal(_ expression: String) -> String {
        let leading = "(CASE WHEN c.a >= 1 THEN length(CAST(trunc(c.a) AS text)) - 1"
            + " ELSE -(length(split_part(CAST(c.a AS text), '.', 2)) - length(ltrim(split_part(CAST(c.a AS text), '.', 2), '0'))) - 1 END)"
        let digits = "(SELECT l.p, trunc(c.a * CAST('1e' || (38 - l.p) AS numeric)) AS m39 FROM (SELECT \(leading) AS p) AS l)"
        let kept = "(SELECT CASE WHEN d.m39 <= 340282366920938463463374607431768211455 THEN d.p - 38 ELSE d.p - 37 END AS e,"
            + " CASE WHEN d.m39 <= 340282366920938463463374607431768211455 THEN d.m39 ELSE trunc(c.a * CAST('1e' || (37 - d.p) AS numeric)) END AS m FROM \(digits) AS d)"
        let cut = "(SELECT CASE WHEN k.e > 127 THEN NULL ELSE sign(c.v) * k.m * CAST('1e' || k.e AS numeric) END FROM \(kept) AS k)"
        return "(SELECT CASE WHEN c.v = 0 THEN CAST(0 AS numeric) ELSE \(cut) END FROM (SELECT \(expression) AS v, abs(\(expression)) AS a OFFSET 0) AS c)"
    }

    /// ``DecimalAccumulator/total``: the exact sum, cut; 0 when empty.
    static func decimalSum(_ column: String) -> String {
        cutToDecimal("COALESCE(SUM(\(column)), 0)")
    }

    /// ``DecimalAccumulator/average``: the exact sum divided by the count,
    /// truncated toward zero at 10^-128, cut; NULL when empty.
    static func decimalAverage(_ column: String) -> String {
        cutToDecimal("(div(SUM(\(column)) * CAST('1e128' AS numeric), NULLIF(COUNT(\(column)), 0)) * CAST('1e-128' AS numeric))")
    }
}
