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
    /// Not through PostgreSQL's own text: where a shorter text lies exactly
    /// half a unit in the last place away, Swift writes it (reading it back
    /// rounds to even, to the same Double) and PostgreSQL does not. So the
    /// exact value is rounded (half to even) to 1, 2… 17 significant digits,
    /// and the first that reads back as the same Double is taken, as
    /// Swift's shortest is. Each derived table is fenced with `OFFSET 0`,
    /// so that PostgreSQL computes its value once instead of copying the
    /// expression (an aggregate's subquery, say) into every use.
    static func doubleAsDecimal(_ expression: SQLFragment) -> SQLFragment {
        let limit = "(power(CAST(2 AS numeric), 1024) - power(CAST(2 AS numeric), 970))"
        // Rounded half to even, as Swift breaks a tie between two shortest
        // texts: on an exact tie, the truncation when its last digit is even.
        let tie = "abs(r.v - r.t) = CAST('5e' || (-r.s - 1) AS numeric) AND mod(abs(r.t) * power(CAST(10 AS numeric), r.s), 2) = 0"
        let rounded = "SELECT r.n, CASE WHEN \(tie) THEN r.t ELSE round(r.v, r.s) END AS c, r.s FROM "
            + "(SELECT n, e.v, n - 1 - e.m AS s, trunc(e.v, n - 1 - e.m) AS t FROM generate_series(1, 17) AS n, "
            + "(SELECT \(exactValue("d.x")) AS v, CAST(floor(log(abs(d.x))) AS integer) AS m OFFSET 0) AS e OFFSET 0) AS r"
        let candidates = rounded
        let shortest = "(SELECT CASE WHEN k.s BETWEEN -127 AND 128 THEN k.c END FROM (\(candidates)) AS k "
            + "WHERE CASE WHEN abs(k.c) < \(limit) THEN CAST(k.c AS double precision) = d.x ELSE FALSE END ORDER BY k.n LIMIT 1)"
        return "(SELECT CASE WHEN d.x IN (\(specials)) THEN NULL WHEN d.x = 0 THEN CAST(0 AS numeric) ELSE \(shortest) END FROM (SELECT CAST("
            + expression + " AS double precision) AS x OFFSET 0) AS d)"
    }

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
            + " ELSE \(significand) * power(CAST(5 AS numeric), -\(power)) * CAST('1e' || \(power) AS numeric) END)"
        return "(CASE WHEN \(column) IN (\(specials)) THEN NULL WHEN \(bits) < 0 THEN -\(magnitude) ELSE \(magnitude) END)"
    }

    /// NaN and the infinities, as `double precision` literals.
    static let specials = "CAST('NaN' AS double precision), CAST('Infinity' AS double precision), CAST('-Infinity' AS double precision)"

    /// ``ExactDoubleSum``'s value as an aggregate: the exact sum of the
    /// finite values rounded once to the nearest Double (PostgreSQL reads
    /// `numeric` into a Double with `strtod`, correctly rounded; from
    /// 2^1024 - 2^970 on, the sum rounds to an infinity), plus the sum of
    /// NaNs and infinities in plain arithmetic (`inf + -inf` is NaN); 0 when
    /// there is no value.
    static func exactDoubleSum(_ column: String) -> String {
        let sum = "COALESCE(SUM(\(exactValue(column))), 0)"
        let limit = "(power(CAST(2 AS numeric), 1024) - power(CAST(2 AS numeric), 970))"
        let rounded = "(CASE WHEN \(sum) >= \(limit) THEN CAST('Infinity' AS double precision)"
            + " WHEN \(sum) <= -\(limit) THEN CAST('-Infinity' AS double precision) ELSE CAST(\(sum) AS double precision) END)"
        return "(COALESCE(SUM(CASE WHEN \(column) IN (\(specials)) THEN \(column) END), 0) + \(rounded))"
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
