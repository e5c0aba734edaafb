import Foundation
import GRDB
import StrataModel
import Testing
@testable import StrataQuery
import StrataStore
import StrataSQLite

/// The evaluator and the SQL compiler must return identical ordered
/// primary-key lists for every fetch; for many cases an independent oracle
/// (plain Swift over the fixture's records) also gives the expected count,
/// so the two paths cannot be wrong together.
@Suite struct AgreementTests {
    @Test(arguments: AgreementCases.all)
    func evaluatorAndSQLAgree(_ testCase: AgreementCase) throws {
        let fixture = try QueryFixture()
        let (memory, sql) = try fixture.runBoth(testCase.fetch)
        #expect(memory == sql, "\(testCase.name): memory \(memory) vs SQL \(sql)")
        if let expected = testCase.expected {
            #expect(memory.count == expected(fixture.data), "\(testCase.name): expected \(expected(fixture.data)) results, got \(memory.count)")
        }
    }

    @Test func everyCaseHasADistinctName() {
        let names = AgreementCases.all.map(\.name)
        #expect(Set(names).count == names.count)
    }

    @Test func aGoodShareHasAnOracle() {
        let withOracle = AgreementCases.all.filter { $0.expected != nil }.count
        #expect(withOracle * 2 >= AgreementCases.all.count)
    }

    @Test func invalidRegexFailsBothWays() throws {
        let fixture = try QueryFixture()
        let fetch = ResolvedFetch(entityName: "Book", predicate: M.compare(M.key("Book", "title"), .matches, .string("(unclosed"), .string))
        #expect(throws: StrataError.self) { _ = try fixture.memory(fetch) }
        #expect(throws: StrataError.self) { _ = try fixture.sql(fetch) }
        do {
            _ = try fixture.memory(fetch)
        } catch let error as StrataError {
            #expect(error.code == .predicateType)
            #expect(error.message.contains("(unclosed"))
        }
        do {
            _ = try fixture.sql(fetch)
        } catch let error as StrataError {
            #expect(error.code == .predicateType)
            #expect(error.message.contains("(unclosed"))
        }
    }

    @Test func invalidRegexReadFromDataFailsBothWays() throws {
        let fixture = try QueryFixture()
        // Each title used as a pattern for itself ("a*b?c" does not match
        // itself, "😀 Smile" does): whatever happens, both paths must agree.
        let fetch = ResolvedFetch(entityName: "Book", predicate: M.compare(M.key("Book", "title"), .matches, M.key("Book", "title"), .string))
        let memory = Result { try fixture.memory(fetch) }
        let sql = Result { try fixture.sql(fetch) }
        switch (memory, sql) {
        case let (.success(a), .success(b)):
            #expect(a == b)
        case let (.failure(a), .failure(b)):
            let strata = SQLiteFunctions.strataError(from: b)
            #expect((a as? StrataError)?.code == strata?.code)
        default:
            Issue.record("one path failed and the other did not: \(memory) / \(sql)")
        }
    }
}

/// One agreement case.
struct AgreementCase: Sendable, CustomTestStringConvertible {
    let name: String
    let fetch: ResolvedFetch
    let expected: (@Sendable (FixtureData) -> Int)?
    var testDescription: String { name }
}

private typealias M = FixtureModel

// MARK: - Oracle helpers

extension FixtureData {
    func count(_ entity: String, subentities: Bool = true, _ test: (FixtureRecord) -> Bool) -> Int {
        all(entity, subentities: subentities).filter(test).count
    }

    static func int(_ value: PropertyValue) -> Int64? {
        switch value {
        case .integer(let v): v
        case .boolean(let b): b ? 1 : 0
        default: nil
        }
    }

    static func double(_ value: PropertyValue) -> Double? {
        switch value {
        case .integer(let v): Double(v)
        case .double(let d): d
        default: nil
        }
    }

    static func decimal(_ value: PropertyValue) -> Decimal? {
        if case .decimal(let d) = value { return d }
        return nil
    }

    static func text(_ value: PropertyValue, _ options: StringComparisonOptions = []) -> [UInt8]? {
        switch value {
        case .string(let s), .uri(let s): Array(StringFolding.fold(s, options).utf8)
        default: nil
        }
    }

    static func bytes(_ text: String, _ options: StringComparisonOptions = []) -> [UInt8] {
        Array(StringFolding.fold(text, options).utf8)
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        if needle.isEmpty { return true }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        return false
    }

    static func seconds(_ value: PropertyValue) -> Double? {
        if case .date(let d) = value { return d.timeIntervalSinceReferenceDate }
        return nil
    }
}

private func fetch(
    _ entity: String,
    _ predicate: QueryPredicate = .constant(true),
    sort: [QuerySortKey] = [],
    limit: Int? = nil,
    offset: Int = 0,
    subentities: Bool = true
) -> ResolvedFetch {
    ResolvedFetch(entityName: entity, includesSubentities: subentities, predicate: predicate, sortKeys: sort, limit: limit, offset: offset)
}

private func c(_ name: String, _ fetch: ResolvedFetch, _ expected: (@Sendable (FixtureData) -> Int)? = nil) -> AgreementCase {
    AgreementCase(name: name, fetch: fetch, expected: expected)
}

private func date(_ seconds: Double) -> PropertyValue { .date(Date(timeIntervalSinceReferenceDate: seconds)) }
private func dec(_ text: String) -> PropertyValue { .decimal(Decimal(string: text) ?? 0) }

// MARK: - Cases

enum AgreementCases {
    static let all: [AgreementCase] = integers + doubles + decimals + strings + otherDomains + paths + objects
        + quantifiers + aggregates + subqueries + entities + sorting + logic

    static let integers: [AgreementCase] = {
        let pages = M.key("Book", "pages")
        typealias D = FixtureData
        return [
            c("int ==", fetch("Book", M.compare(pages, .equal, .integer(100), .integer))) { d in d.count("Book") { D.int($0["pages"]) == 100 } },
            c("int !=", fetch("Book", M.compare(pages, .notEqual, .integer(100), .integer))) { d in d.count("Book") { D.int($0["pages"]) != 100 } },
            c("int <", fetch("Book", M.compare(pages, .lessThan, .integer(100), .integer))) { d in d.count("Book") { (D.int($0["pages"]).map { $0 < 100 }) ?? false } },
            c("int <=", fetch("Book", M.compare(pages, .lessThanOrEqual, .integer(100), .integer))) { d in d.count("Book") { (D.int($0["pages"]).map { $0 <= 100 }) ?? false } },
            c("int >", fetch("Book", M.compare(pages, .greaterThan, .integer(100), .integer))) { d in d.count("Book") { (D.int($0["pages"]).map { $0 > 100 }) ?? false } },
            c("int >=", fetch("Book", M.compare(pages, .greaterThanOrEqual, .integer(-32768), .integer))) { d in d.count("Book") { D.int($0["pages"]) != nil } },
            c("int == nil", fetch("Book", M.compare(pages, .equal, .null, .integer))) { d in d.count("Book") { D.int($0["pages"]) == nil } },
            c("int != nil", fetch("Book", M.compare(pages, .notEqual, .null, .integer))) { d in d.count("Book") { D.int($0["pages"]) != nil } },
            c("nil == int (constant left)", fetch("Book", M.compare(.constant(.null), .equal, pages, .integer))) { d in d.count("Book") { D.int($0["pages"]) == nil } },
            c("int < nil is false", fetch("Book", M.compare(pages, .lessThan, .null, .integer))) { _ in 0 },
            c("NOT (int < 100) includes nil", fetch("Book", .not(M.compare(pages, .lessThan, .integer(100), .integer)))) { d in d.count("Book") { !((D.int($0["pages"]).map { $0 < 100 }) ?? false) } },
            c("NOT (int < nil) is all", fetch("Book", .not(M.compare(pages, .lessThan, .null, .integer)))) { d in d.count("Book") { _ in true } },
            c("int IN list with nil", fetch("Book", M.list(pages, .in, [.integer(100), .integer(0), .null], .integer))) { d in d.count("Book") { [100, 0, nil].contains(D.int($0["pages"])) } },
            c("int IN list without nil", fetch("Book", M.list(pages, .in, [.integer(100), .integer(32767)], .integer))) { d in d.count("Book") { [100, 32767].contains(D.int($0["pages"])) } },
            c("int IN empty list", fetch("Book", M.list(pages, .in, [], .integer))) { _ in 0 },
            c("int IN {nil}", fetch("Book", M.list(pages, .in, [.null], .integer))) { d in d.count("Book") { D.int($0["pages"]) == nil } },
            c("NOT int IN list", fetch("Book", .not(M.list(pages, .in, [.integer(100), .integer(0)], .integer)))) { d in d.count("Book") { ![100, 0].contains(D.int($0["pages"])) } },
            c("int BETWEEN", fetch("Book", M.list(pages, .between, [.integer(0), .integer(250)], .integer))) { d in d.count("Book") { (D.int($0["pages"]).map { 0...250 ~= $0 }) ?? false } },
            c("int BETWEEN with nil bound", fetch("Book", M.list(pages, .between, [.null, .integer(250)], .integer))) { _ in 0 },
            c("NOT int BETWEEN", fetch("Book", .not(M.list(pages, .between, [.integer(0), .integer(250)], .integer)))) { d in d.count("Book") { !((D.int($0["pages"]).map { 0...250 ~= $0 }) ?? false) } },
            c("bool == true", fetch("Book", M.compare(M.key("Book", "inPrint"), .equal, .boolean(true), .integer))) { d in d.count("Book") { $0["inPrint"] == .boolean(true) } },
            c("bool == 0", fetch("Book", M.compare(M.key("Book", "inPrint"), .equal, .integer(0), .integer))) { d in d.count("Book") { $0["inPrint"] == .boolean(false) } },
            c("bool != true", fetch("Book", M.compare(M.key("Book", "inPrint"), .notEqual, .boolean(true), .integer))) { d in d.count("Book") { $0["inPrint"] != .boolean(true) } },
            c("int64 beyond 2^53 exact", fetch("Book", M.compare(M.key("Book", "copies"), .greaterThan, .integer(9_007_199_254_740_992), .integer))) { d in d.count("Book") { (D.int($0["copies"]).map { $0 > 9_007_199_254_740_992 }) ?? false } },
            c("int64 == 2^53+1", fetch("Book", M.compare(M.key("Book", "copies"), .equal, .integer(9_007_199_254_740_993), .integer))) { d in d.count("Book") { D.int($0["copies"]) == 9_007_199_254_740_993 } },
            c("int attribute vs attribute", fetch("Chapter", M.compare(M.key("Chapter", "number"), .lessThan, M.key("Chapter", "words"), .integer))) { d in
                d.count("Chapter") { r in
                    guard let n = D.int(r["number"]), let w = D.int(r["words"]) else { return false }
                    return n < w
                }
            },
            c("int attribute == attribute with nils", fetch("Chapter", M.compare(M.key("Chapter", "number"), .equal, M.key("Chapter", "words"), .integer))) { d in
                d.count("Chapter") { D.int($0["number"]) == D.int($0["words"]) }
            },
        ]
    }()

    static let doubles: [AgreementCase] = {
        let rating = M.key("Book", "rating")
        typealias D = FixtureData
        return [
            c("double == 0.3", fetch("Book", M.compare(rating, .equal, .double(0.3), .double))) { d in d.count("Book") { D.double($0["rating"]) == 0.3 } },
            c("double == 0.1+0.2", fetch("Book", M.compare(rating, .equal, .double(0.1 + 0.2), .double))) { d in d.count("Book") { D.double($0["rating"]) == 0.1 + 0.2 } },
            c("double > 0.1", fetch("Book", M.compare(rating, .greaterThan, .double(0.1), .double))) { d in d.count("Book") { (D.double($0["rating"]).map { $0 > 0.1 }) ?? false } },
            c("double < 0", fetch("Book", M.compare(rating, .lessThan, .integer(0), .double))) { d in d.count("Book") { (D.double($0["rating"]).map { $0 < 0 }) ?? false } },
            c("NOT double >= 0.2", fetch("Book", .not(M.compare(rating, .greaterThanOrEqual, .double(0.2), .double)))) { d in d.count("Book") { !((D.double($0["rating"]).map { $0 >= 0.2 }) ?? false) } },
            c("double IN", fetch("Book", M.list(rating, .in, [.double(0.1), .double(4.75), .null], .double))) { d in d.count("Book") { [0.1, 4.75, nil].contains(D.double($0["rating"])) } },
            c("-0.0 == 0.0", fetch("Author", M.compare(M.key("Author", "rating"), .equal, .double(0), .double))) { d in d.count("Author") { D.double($0["rating"]) == 0 } },
            c("int64 in double domain rounds like Double()", fetch("Book", M.compare(M.key("Book", "copies"), .equal, .double(9_007_199_254_740_992), .double))) { d in
                d.count("Book") { (D.int($0["copies"]).map { Double($0) == 9_007_199_254_740_992 }) ?? false }
            },
            c("int16 in double domain", fetch("Book", M.compare(M.key("Book", "pages"), .greaterThan, .double(99.5), .double))) { d in d.count("Book") { (D.int($0["pages"]).map { Double($0) > 99.5 }) ?? false } },
            c("float equality", fetch("Book", M.compare(M.key("Book", "weight"), .equal, .double(Double(Float(0.1))), .double))) { d in d.count("Book") { D.double($0["weight"]) == Double(Float(0.1)) } },
            c("float < 1", fetch("Book", M.compare(M.key("Book", "weight"), .lessThan, .integer(1), .double))) { d in d.count("Book") { (D.double($0["weight"]).map { $0 < 1 }) ?? false } },
            c("double BETWEEN", fetch("Book", M.list(rating, .between, [.double(0.1), .double(0.3)], .double))) { d in d.count("Book") { (D.double($0["rating"]).map { 0.1...0.3 ~= $0 }) ?? false } },
            c("huge double", fetch("Author", M.compare(M.key("Author", "rating"), .greaterThan, .double(1e299), .double))) { d in d.count("Author") { (D.double($0["rating"]).map { $0 > 1e299 }) ?? false } },
            c("double vs int attribute", fetch("Book", M.compare(M.key("Book", "rating"), .lessThan, M.key("Book", "pages"), .double))) { d in
                d.count("Book") { r in
                    guard let a = D.double(r["rating"]), let b = D.int(r["pages"]) else { return false }
                    return a < Double(b)
                }
            },
        ]
    }()

    static let decimals: [AgreementCase] = {
        let price = M.key("Book", "price")
        typealias D = FixtureData
        @Sendable func count(_ d: FixtureData, _ test: (Decimal) -> Bool) -> Int {
            d.count("Book") { D.decimal($0["price"]).map(test) ?? false }
        }
        return [
            c("decimal == 0.3 (also 0.30)", fetch("Book", M.compare(price, .equal, dec("0.3"), .decimal))) { d in count(d) { $0 == Decimal(string: "0.3") } },
            c("decimal == 7.5 (also 7.50)", fetch("Book", M.compare(price, .equal, dec("7.5"), .decimal))) { d in count(d) { $0 == 7.5 } },
            c("decimal < 0", fetch("Book", M.compare(price, .lessThan, .integer(0), .decimal))) { d in count(d) { $0 < 0 } },
            c("decimal > -0.51", fetch("Book", M.compare(price, .greaterThan, dec("-0.51"), .decimal))) { d in count(d) { $0 > Decimal(string: "-0.51")! } },
            c("decimal BETWEEN negatives", fetch("Book", M.list(price, .between, [dec("-0.51"), dec("-0.5")], .decimal))) { d in
                count(d) { $0 >= Decimal(string: "-0.51")! && $0 <= Decimal(string: "-0.5")! }
            },
            c("decimal tiny", fetch("Book", .and([M.compare(price, .greaterThan, dec("1e-21"), .decimal), M.compare(price, .lessThan, dec("1e-19"), .decimal)]))) { d in
                count(d) { $0 > Decimal(string: "1e-21")! && $0 < Decimal(string: "1e-19")! }
            },
            c("decimal huge", fetch("Book", M.compare(price, .greaterThanOrEqual, dec("12345678901234567890.123456789"), .decimal))) { d in
                count(d) { $0 >= Decimal(string: "12345678901234567890.123456789")! }
            },
            c("decimal IN with nil", fetch("Book", M.list(price, .in, [dec("0.1"), .integer(100), .null], .decimal))) { d in
                d.count("Book") { r in
                    guard let p = D.decimal(r["price"]) else { return true }
                    return p == Decimal(string: "0.1") || p == 100
                }
            },
            c("decimal != 0", fetch("Book", M.compare(price, .notEqual, .integer(0), .decimal))) { d in d.count("Book") { D.decimal($0["price"]) != 0 } },
            c("int attribute in decimal domain", fetch("Book", M.compare(M.key("Book", "pages"), .lessThan, dec("100.5"), .decimal))) { d in
                d.count("Book") { (D.int($0["pages"]).map { $0 <= 100 }) ?? false }
            },
            c("double attribute in decimal domain == 0.1", fetch("Book", M.compare(M.key("Book", "rating"), .equal, dec("0.1"), .decimal))) { d in
                d.count("Book") { D.double($0["rating"]) == 0.1 }
            },
            c("double attribute in decimal domain == 0.3 excludes 0.30000000000000004", fetch("Book", M.compare(M.key("Book", "rating"), .equal, dec("0.3"), .decimal))) { d in
                d.count("Book") { D.double($0["rating"]) == 0.3 }
            },
            c("double constant in decimal domain", fetch("Book", M.compare(price, .lessThanOrEqual, .double(0.3), .decimal))) { d in count(d) { $0 <= Decimal(string: "0.3")! } },
            c("decimal vs int attribute", fetch("Book", M.compare(price, .lessThan, M.key("Book", "pages"), .decimal))) { d in
                d.count("Book") { r in
                    guard let p = D.decimal(r["price"]), let n = D.int(r["pages"]) else { return false }
                    return p < Decimal(n)
                }
            },
        ]
    }()

    static let strings: [AgreementCase] = {
        let title = M.key("Book", "title")
        typealias D = FixtureData
        @Sendable func count(_ d: FixtureData, _ options: StringComparisonOptions = [], _ test: ([UInt8]) -> Bool) -> Int {
            d.count("Book") { D.text($0["title"], options).map(test) ?? false }
        }
        let cd: StringComparisonOptions = [.caseInsensitive, .diacriticInsensitive]
        return [
            c("string ==", fetch("Book", M.compare(title, .equal, .string("Apple"), .string))) { d in count(d) { $0 == D.bytes("Apple") } },
            c("string ==[c]", fetch("Book", M.compare(title, .equal, .string("Apple"), .string, .caseInsensitive))) { d in count(d, .caseInsensitive) { $0 == D.bytes("apple") } },
            c("string ==[d]", fetch("Book", M.compare(title, .equal, .string("eclair"), .string, .diacriticInsensitive))) { d in count(d, .diacriticInsensitive) { $0 == D.bytes("eclair") } },
            c("string ==[cd]", fetch("Book", M.compare(title, .equal, .string("CREME BRULEE"), .string, cd))) { d in count(d, cd) { $0 == D.bytes("creme brulee") } },
            c("string == precomposed only", fetch("Book", M.compare(title, .equal, .string("éclair"), .string))) { d in count(d) { $0 == D.bytes("éclair") } },
            c("string == decomposed only", fetch("Book", M.compare(title, .equal, .string("e\u{301}clair"), .string))) { d in count(d) { $0 == D.bytes("e\u{301}clair") } },
            c("string != includes nil", fetch("Book", M.compare(title, .notEqual, .string("Apple"), .string))) { d in d.count("Book") { D.text($0["title"]) != D.bytes("Apple") } },
            c("string == empty", fetch("Book", M.compare(title, .equal, .string(""), .string))) { d in count(d) { $0.isEmpty } },
            c("string == nil", fetch("Book", M.compare(title, .equal, .null, .string))) { d in d.count("Book") { $0["title"] == .null } },
            c("string < B (scalar order)", fetch("Book", M.compare(title, .lessThan, .string("B"), .string))) { d in count(d) { $0.lexicographicallyPrecedes(D.bytes("B")) } },
            c("string > Z (unicode after ASCII)", fetch("Book", M.compare(title, .greaterThan, .string("Z"), .string))) { d in count(d) { D.bytes("Z").lexicographicallyPrecedes($0) } },
            c("string >=[c] m", fetch("Book", M.compare(title, .greaterThanOrEqual, .string("M"), .string, .caseInsensitive))) { d in count(d, .caseInsensitive) { !$0.lexicographicallyPrecedes(D.bytes("m")) } },
            c("string BETWEEN[cd]", fetch("Book", M.list(title, .between, [.string("a"), .string("E")], .string, cd))) { d in
                count(d, cd) { !$0.lexicographicallyPrecedes(D.bytes("a")) && !D.bytes("e").lexicographicallyPrecedes($0) }
            },
            c("string IN[c] with nil", fetch("Book", M.list(title, .in, [.string("APPLE"), .string("zebra"), .null], .string, .caseInsensitive))) { d in
                d.count("Book") { r in
                    guard let t = D.text(r["title"], .caseInsensitive) else { return true }
                    return t == D.bytes("apple") || t == D.bytes("zebra")
                }
            },
            c("BEGINSWITH", fetch("Book", M.compare(title, .beginsWith, .string("cr"), .string))) { d in count(d) { $0.starts(with: D.bytes("cr")) } },
            c("BEGINSWITH[c]", fetch("Book", M.compare(title, .beginsWith, .string("CR"), .string, .caseInsensitive))) { d in count(d, .caseInsensitive) { $0.starts(with: D.bytes("cr")) } },
            c("BEGINSWITH[cd]", fetch("Book", M.compare(title, .beginsWith, .string("ecl"), .string, cd))) { d in count(d, cd) { $0.starts(with: D.bytes("ecl")) } },
            c("BEGINSWITH empty needle", fetch("Book", M.compare(title, .beginsWith, .string(""), .string))) { d in count(d) { _ in true } },
            c("ENDSWITH[d]", fetch("Book", M.compare(title, .endsWith, .string("e"), .string, .diacriticInsensitive))) { d in count(d, .diacriticInsensitive) { $0.reversed().starts(with: D.bytes("e").reversed()) } },
            c("ENDSWITH emoji", fetch("Book", M.compare(title, .endsWith, .string("本"), .string))) { d in count(d) { $0.reversed().starts(with: D.bytes("本").reversed()) } },
            c("CONTAINS[c]", fetch("Book", M.compare(title, .contains, .string("AN"), .string, .caseInsensitive))) { d in
                count(d, .caseInsensitive) { D.contains($0, D.bytes("an")) }
            },
            c("CONTAINS combining mark", fetch("Book", M.compare(title, .contains, .string("\u{301}"), .string))) { d in count(d) { String(decoding: $0, as: UTF8.self).unicodeScalars.contains("\u{301}") } },
            c("NOT CONTAINS includes nil", fetch("Book", .not(M.compare(title, .contains, .string("a"), .string)))) { d in
                d.count("Book") { r in !((D.text(r["title"]).map { String(decoding: $0, as: UTF8.self).unicodeScalars.contains("a") }) ?? false) }
            },
            c("LIKE *an*[c]", fetch("Book", M.compare(title, .like, .string("*AN*"), .string, .caseInsensitive))),
            c("LIKE ?clair[cd]", fetch("Book", M.compare(title, .like, .string("?clair"), .string, cd))),
            c("LIKE ?clair (grapheme)", fetch("Book", M.compare(title, .like, .string("?clair"), .string))) { d in
                count(d) { t in
                    let s = String(decoding: t, as: UTF8.self)
                    return s.count == 6 && s.unicodeScalars.reversed().prefix(5).elementsEqual("clair".unicodeScalars.reversed())
                }
            },
            c("LIKE escaped wildcards", fetch("Book", M.compare(title, .like, .string("a\\*b\\?c"), .string))) { d in count(d) { $0 == D.bytes("a*b?c") } },
            c("LIKE backslash", fetch("Book", M.compare(title, .like, .string("*\\\\*"), .string))) { d in count(d) { $0.contains(UInt8(ascii: "\\")) } },
            c("LIKE cr?me*[c]", fetch("Book", M.compare(title, .like, .string("cr?me*"), .string, .caseInsensitive))),
            c("LIKE *", fetch("Book", M.compare(title, .like, .string("*"), .string))) { d in count(d) { _ in true } },
            c("LIKE ? (one character)", fetch("Book", M.compare(title, .like, .string("?"), .string))) { d in count(d) { String(decoding: $0, as: UTF8.self).count == 1 } },
            c("LIKE empty", fetch("Book", M.compare(title, .like, .string(""), .string))) { d in count(d) { $0.isEmpty } },
            c("LIKE a Character of two scalars", fetch("Book", M.compare(title, .like, .string("e\u{301}*"), .string))) { d in
                // By scalars: Character's == would take "é" too.
                count(d) { String(decoding: $0, as: UTF8.self).first?.unicodeScalars.elementsEqual("e\u{301}".unicodeScalars) ?? false }
            },
            c("LIKE ? fused with a combining mark is a literal", fetch("Book", M.compare(title, .like, .string("?\u{301}clair"), .string))) { _ in 0 },
            c("LIKE emoji then anything", fetch("Book", M.compare(title, .like, .string("😀*"), .string))) { d in count(d) { $0.starts(with: D.bytes("😀")) } },
            c("LIKE [d] two Characters", fetch("Book", M.compare(title, .like, .string("??"), .string, .diacriticInsensitive))),
            c("LIKE newline", fetch("Book", M.compare(title, .like, .string("line?break"), .string))) { _ in 3 },
            c("MATCHES [A-Z].*", fetch("Book", M.compare(title, .matches, .string("[A-Z].*"), .string))),
            c("MATCHES[c]", fetch("Book", M.compare(title, .matches, .string("[a-z ]+"), .string, .caseInsensitive))),
            c("MATCHES[d]", fetch("Book", M.compare(title, .matches, .string("e.*"), .string, .diacriticInsensitive))),
            c("MATCHES whole string (alternation)", fetch("Book", M.compare(title, .matches, .string("a|apple"), .string))) { d in count(d) { $0 == D.bytes("apple") } },
            c("MATCHES nil pattern", fetch("Book", M.compare(title, .matches, .null, .string))) { _ in 0 },
            c("NOT MATCHES", fetch("Book", .not(M.compare(title, .matches, .string(".*[aeiou].*"), .string)))),
            c("URI BEGINSWITH[c]", fetch("Book", M.compare(M.key("Book", "link"), .beginsWith, .string("https"), .uri, .caseInsensitive))) { d in
                d.count("Book") { (D.text($0["link"], .caseInsensitive).map { $0.starts(with: D.bytes("https")) }) ?? false }
            },
            c("URI ==", fetch("Book", M.compare(M.key("Book", "link"), .equal, .uri("urn:isbn:5"), .uri))) { d in d.count("Book") { $0["link"] == .uri("urn:isbn:5") } },
            c("string attribute vs attribute[c]", fetch("Book", M.compare(title, .equal, M.key("Book", "author.name"), .string, .caseInsensitive))),
            c("string vs attribute LIKE", fetch("Book", M.compare(M.key("Book", "author.name"), .like, M.key("Book", "title"), .string))),
            c("string BEGINSWITH attribute", fetch("Book", M.compare(title, .beginsWith, M.key("Book", "author.name"), .string, cd))),
        ]
    }()

    static let otherDomains: [AgreementCase] = {
        typealias D = FixtureData
        let published = M.key("Book", "published")
        let cover = M.key("Book", "cover")
        let isbn = M.key("Book", "isbn")
        let someUUID: UUID = {
            for record in FixtureData.shared.all("Book") { if case .uuid(let u) = record["isbn"] { return u } }
            return UUID()
        }()
        let pivot = UUID(uuid: (0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        @Sendable func uuidBytes(_ value: PropertyValue) -> [UInt8]? {
            guard case .uuid(let u) = value else { return nil }
            return withUnsafeBytes(of: u.uuid) { Array($0) }
        }
        let pivotBytes = withUnsafeBytes(of: pivot.uuid) { Array($0) }
        return [
            c("date >", fetch("Book", M.compare(published, .greaterThan, date(0), .date))) { d in d.count("Book") { (D.seconds($0["published"]).map { $0 > 0 }) ?? false } },
            c("date == exact", fetch("Book", M.compare(published, .equal, date(3 * 1_000_003.5 - 5.0e7), .date))) { _ in 1 },
            c("date == nil", fetch("Book", M.compare(published, .equal, .null, .date))) { d in d.count("Book") { $0["published"] == .null } },
            c("date BETWEEN", fetch("Book", M.list(published, .between, [date(-1e7), date(1e7)], .date))) { d in d.count("Book") { (D.seconds($0["published"]).map { -1e7...1e7 ~= $0 }) ?? false } },
            c("date numeric constant", fetch("Book", M.compare(published, .lessThan, .double(-2.5e7), .date))) { d in d.count("Book") { (D.seconds($0["published"]).map { $0 < -2.5e7 }) ?? false } },
            c("date through path", fetch("Book", M.compare(M.key("Book", "author.born"), .lessThan, M.key("Book", "published"), .date))),
            c("binary ==", fetch("Book", M.compare(cover, .equal, .binary(Data([1, 2])), .binary))) { d in d.count("Book") { $0["cover"] == .binary(Data([1, 2])) } },
            c("binary < (prefix first)", fetch("Book", M.compare(cover, .lessThan, .binary(Data([1, 2, 3])), .binary))) { d in
                d.count("Book") { r in
                    guard case .binary(let b) = r["cover"] else { return false }
                    return Array(b).lexicographicallyPrecedes([1, 2, 3])
                }
            },
            c("binary > empty", fetch("Book", M.compare(cover, .greaterThan, .binary(Data()), .binary))) { d in
                d.count("Book") { r in
                    guard case .binary(let b) = r["cover"] else { return false }
                    return !b.isEmpty
                }
            },
            c("binary IN", fetch("Book", M.list(cover, .in, [.binary(Data()), .binary(Data([0xFF, 0])), .null], .binary))),
            c("uuid ==", fetch("Book", M.compare(isbn, .equal, .uuid(someUUID), .uuid))) { _ in 1 },
            c("uuid > pivot (byte order)", fetch("Book", M.compare(isbn, .greaterThan, .uuid(pivot), .uuid))) { d in
                d.count("Book") { (uuidBytes($0["isbn"]).map { pivotBytes.lexicographicallyPrecedes($0) }) ?? false }
            },
            c("uuid == nil", fetch("Book", M.compare(isbn, .equal, .null, .uuid))) { d in d.count("Book") { $0["isbn"] == .null } },
            c("uuid != value", fetch("Book", M.compare(isbn, .notEqual, .uuid(someUUID), .uuid))) { d in d.count("Book") { _ in true } - 1 },
        ]
    }()

    static let paths: [AgreementCase] = {
        typealias D = FixtureData
        return [
            c("to-one ==", fetch("Book", M.compare(M.key("Book", "author.name"), .equal, .string("Ann"), .string))) { d in
                d.count("Book") { r in d.one(r, "author").map { $0["name"] == .string("Ann") } ?? false }
            },
            c("to-one ==[c]", fetch("Book", M.compare(M.key("Book", "author.name"), .equal, .string("ANN"), .string, .caseInsensitive))) { d in
                d.count("Book") { r in d.one(r, "author").map { D.text($0["name"], .caseInsensitive) == D.bytes("ann") } ?? false }
            },
            c("to-one == nil includes nil author", fetch("Book", M.compare(M.key("Book", "author.name"), .equal, .null, .string))) { d in
                d.count("Book") { r in d.one(r, "author").map { $0["name"] == .null } ?? true }
            },
            c("two hops ==[c]", fetch("Book", M.compare(M.key("Book", "author.mentor.name"), .equal, .string("ann"), .string, .caseInsensitive))) { d in
                d.count("Book") { r in d.one(r, "author").flatMap { d.one($0, "mentor") }.map { D.text($0["name"], .caseInsensitive) == D.bytes("ann") } ?? false }
            },
            c("two hops == nil", fetch("Book", M.compare(M.key("Book", "author.mentor.name"), .equal, .null, .string))) { d in
                d.count("Book") { r in d.one(r, "author").flatMap { d.one($0, "mentor") }.map { $0["name"] == .null } ?? true }
            },
            c("NOT two hops >", fetch("Book", .not(M.compare(M.key("Book", "author.mentor.score"), .greaterThan, .integer(2), .integer)))) { d in
                d.count("Book") { r in !((d.one(r, "author").flatMap { d.one($0, "mentor") }.flatMap { D.int($0["score"]) }.map { $0 > 2 }) ?? false) }
            },
            c("same path twice shares a join", fetch("Book", .and([
                M.compare(M.key("Book", "author.score"), .greaterThan, .integer(0), .integer),
                M.compare(M.key("Book", "author.name"), .notEqual, .null, .string),
            ]))) { d in
                d.count("Book") { r in
                    guard let a = d.one(r, "author"), let s = D.int(a["score"]) else { return false }
                    return s > 0 && a["name"] != .null
                }
            },
            c("three hops from chapter", fetch("Chapter", M.compare(M.key("Chapter", "book.author.name"), .beginsWith, .string("e"), .string, [.caseInsensitive, .diacriticInsensitive]))) { d in
                d.count("Chapter") { r in
                    (d.one(r, "book").flatMap { d.one($0, "author") }.flatMap { D.text($0["name"], [.caseInsensitive, .diacriticInsensitive]) }.map { $0.starts(with: D.bytes("e")) }) ?? false
                }
            },
            c("path vs path", fetch("Book", M.compare(M.key("Book", "author.score"), .greaterThan, M.key("Book", "author.mentor.score"), .integer))),
            c("chapter book title == own title", fetch("Chapter", M.compare(M.key("Chapter", "book.title"), .notEqual, M.key("Chapter", "title"), .string, .caseInsensitive))),
        ]
    }()

    static let objects: [AgreementCase] = {
        let data = FixtureData.shared
        let ann = data.all("Author").first { $0["name"] == .string("Ann") }?.primaryKey ?? 1
        let eve = data.all("Author").first { $0["name"] == .string("Eve") }?.primaryKey ?? 2
        let anEBook = data.all("EBook").first?.primaryKey ?? 1
        let aBook = data.all("Book", subentities: false).first?.primaryKey ?? 1
        let author = M.object("Book", "author")
        let me = M.object("Book", "")
        return [
            c("author == id", fetch("Book", M.compare(author, .equal, .object(M.id("Author", ann)), .object))) { d in
                d.count("Book") { d.one($0, "author")?.primaryKey == ann && d.one($0, "author")?.entity == "Author" }
            },
            c("author != id includes nil", fetch("Book", M.compare(author, .notEqual, .object(M.id("Author", ann)), .object))) { d in
                d.count("Book") { d.one($0, "author")?.primaryKey != ann }
            },
            c("author == nil", fetch("Book", M.compare(author, .equal, .null, .object))) { d in d.count("Book") { $0.toOne["author"] == nil } },
            c("author IN ids and nil", fetch("Book", M.list(author, .in, [.object(M.id("Author", ann)), .object(M.id("Author", eve)), .null], .object))) { d in
                d.count("Book") { r in
                    guard let a = d.one(r, "author") else { return true }
                    return a.primaryKey == ann || a.primaryKey == eve
                }
            },
            c("author == id of other hierarchy", fetch("Book", M.compare(author, .equal, .object(M.id("Tag", ann)), .object))) { _ in 0 },
            c("author == temporary id", fetch("Book", M.compare(author, .equal, .object(.temporary(entityName: "Author")), .object))) { _ in 0 },
            c("SELF == ebook id", fetch("Book", M.compare(me, .equal, .object(M.id("EBook", anEBook)), .object))) { _ in 1 },
            c("SELF == ebook key named as Book", fetch("Book", M.compare(me, .equal, .object(M.id("Book", anEBook)), .object))) { _ in 1 },
            c("SELF IN", fetch("Book", M.list(me, .in, [.object(M.id("Book", aBook)), .object(M.id("EBook", anEBook)), .object(M.id("Author", aBook))], .object))) { _ in 2 },
            c("NOT SELF IN", fetch("Book", .not(M.list(me, .in, [.object(M.id("Book", aBook))], .object)))) { d in d.count("Book") { _ in true } - 1 },
            c("author.mentor == author (object vs object)", fetch("Book", M.compare(M.object("Book", "author.mentor"), .equal, author, .object))) { d in
                d.count("Book") { r in
                    let a = d.one(r, "author")
                    let m = a.flatMap { d.one($0, "mentor") }
                    return a?.primaryKey == m?.primaryKey
                }
            },
            c("author.mentor != author", fetch("Book", M.compare(M.object("Book", "author.mentor"), .notEqual, author, .object))),
            c("SELF == author (different hierarchies)", fetch("Book", M.compare(me, .equal, author, .object))) { _ in 0 },
            c("chapter.book.author == id", fetch("Chapter", M.compare(M.object("Chapter", "book.author"), .equal, .object(M.id("Author", ann)), .object))),
            c("nil == nil constant", fetch("Tag", M.compare(.constant(.null), .equal, .constant(.null), .object))) { d in d.count("Tag") { _ in true } },
        ]
    }()

    static let quantifiers: [AgreementCase] = {
        typealias D = FixtureData
        let books = M.collection("Author", "books")
        let tags = M.collection("Book", "tags")
        let chapters = M.collection("Book", "chapters")
        func pages(_ op: ComparisonOperator, _ n: Int64) -> QueryPredicate { M.compare(M.key("Book", "pages"), op, .integer(n), .integer) }
        return [
            c("ANY books.pages > 200", fetch("Author", .quantified(.any, books, pages(.greaterThan, 200)))) { d in
                d.count("Author") { a in d.many(a, "books").contains { (D.int($0["pages"]).map { $0 > 200 }) ?? false } }
            },
            c("ALL books.pages > 0 (true when empty)", fetch("Author", .quantified(.all, books, pages(.greaterThan, 0)))) { d in
                d.count("Author") { a in d.many(a, "books").allSatisfy { (D.int($0["pages"]).map { $0 > 0 }) ?? false } }
            },
            c("NONE books.title ==[c] apple", fetch("Author", .quantified(.none, books, M.compare(M.key("Book", "title"), .equal, .string("apple"), .string, .caseInsensitive)))) { d in
                d.count("Author") { a in !d.many(a, "books").contains { D.text($0["title"], .caseInsensitive) == D.bytes("apple") } }
            },
            c("ALL with nil values", fetch("Author", .quantified(.all, books, M.compare(M.key("Book", "price"), .greaterThan, .integer(0), .decimal)))) { d in
                d.count("Author") { a in d.many(a, "books").allSatisfy { (D.decimal($0["price"]).map { $0 > 0 }) ?? false } }
            },
            c("NOT ANY", fetch("Author", .not(.quantified(.any, books, pages(.equal, 32767))))) { d in
                d.count("Author") { a in !d.many(a, "books").contains { D.int($0["pages"]) == 32767 } }
            },
            c("ANY many-to-many [cd]", fetch("Book", .quantified(.any, tags, M.compare(M.key("Tag", "name"), .equal, .string("ete"), .string, [.caseInsensitive, .diacriticInsensitive])))) { d in
                d.count("Book") { b in d.many(b, "tags").contains { D.text($0["name"], [.caseInsensitive, .diacriticInsensitive]) == D.bytes("ete") } }
            },
            c("ALL tags.name != nil", fetch("Book", .quantified(.all, tags, M.compare(M.key("Tag", "name"), .notEqual, .null, .string)))) { d in
                d.count("Book") { b in d.many(b, "tags").allSatisfy { $0["name"] != .null } }
            },
            c("NONE tags.name == art", fetch("Book", .quantified(.none, tags, M.compare(M.key("Tag", "name"), .equal, .string("art"), .string)))) { d in
                d.count("Book") { b in !d.many(b, "tags").contains { $0["name"] == .string("art") } }
            },
            c("ANY ordered chapters", fetch("Book", .quantified(.any, chapters, M.compare(M.key("Chapter", "title"), .equal, .string("Intro"), .string)))) { d in
                d.count("Book") { b in d.many(b, "chapters").contains { $0["title"] == .string("Intro") } }
            },
            c("ALL chapters.number < 3", fetch("Book", .quantified(.all, chapters, M.compare(M.key("Chapter", "number"), .lessThan, .integer(3), .integer)))) { d in
                d.count("Book") { b in d.many(b, "chapters").allSatisfy { (D.int($0["number"]).map { $0 < 3 }) ?? false } }
            },
            c("ANY through to-one then many-to-many", fetch("Chapter", .quantified(.any, M.collection("Chapter", "book.tags"), M.compare(M.key("Tag", "name"), .beginsWith, .string("f"), .string, .caseInsensitive)))) { d in
                d.count("Chapter") { ch in
                    (d.one(ch, "book").map { d.many($0, "tags").contains { (D.text($0["name"], .caseInsensitive).map { $0.starts(with: D.bytes("f")) }) ?? false } }) ?? false
                }
            },
            c("ALL through nil to-one is true", fetch("Book", .quantified(.all, M.collection("Book", "author.books"), pages(.greaterThan, 0)))) { d in
                d.count("Book") { b in (d.one(b, "author").map { d.many($0, "books").allSatisfy { (D.int($0["pages"]).map { $0 > 0 }) ?? false } }) ?? true }
            },
            c("nested ANY", fetch("Author", .quantified(.any, books, .quantified(.any, M.collection("Book", "tags"), M.compare(M.key("Tag", "name"), .equal, .string("art"), .string))))) { d in
                d.count("Author") { a in d.many(a, "books").contains { b in d.many(b, "tags").contains { $0["name"] == .string("art") } } }
            },
            c("ANY with inner path", fetch("Tag", .quantified(.any, M.collection("Tag", "books"), M.compare(M.key("Book", "author.name"), .equal, .string("Ann"), .string)))) { d in
                d.count("Tag") { t in d.many(t, "books").contains { b in d.one(b, "author")?["name"] == .string("Ann") } }
            },
            c("ALL with inner NOT", fetch("Author", .quantified(.all, books, .not(M.compare(M.key("Book", "title"), .contains, .string("e"), .string))))),
            c("ANY with inner object identity", fetch("Author", .quantified(.any, books, M.compare(M.object("Book", "author"), .equal, M.object("Book", "author.mentor"), .object)))),
            c("ANY inner constant true", fetch("Author", .quantified(.any, books, .constant(true)))) { d in d.count("Author") { !d.many($0, "books").isEmpty } },
        ]
    }()

    static let aggregates: [AgreementCase] = {
        typealias D = FixtureData
        let books = M.collection("Author", "books")
        let pages = M.attribute("Book", "pages")
        let price = M.attribute("Book", "price")
        let rating = M.attribute("Book", "rating")
        func agg(_ f: AggregateFunction, _ path: CollectionPath, _ a: AttributeDescription?) -> QueryOperand { .aggregate(f, path, a) }
        @Sendable func pageSum(_ d: FixtureData, _ a: FixtureRecord) -> Int64 { d.many(a, "books").compactMap { D.int($0["pages"]) }.reduce(0, +) }
        @Sendable func priceSum(_ d: FixtureData, _ a: FixtureRecord) -> Decimal { d.many(a, "books").compactMap { D.decimal($0["price"]) }.reduce(0, +) }
        return [
            c("@count == 0", fetch("Author", M.compare(agg(.count, books, nil), .equal, .integer(0), .integer))) { d in d.count("Author") { d.many($0, "books").isEmpty } },
            c("@count > 5", fetch("Author", M.compare(agg(.count, books, nil), .greaterThan, .integer(5), .integer))) { d in d.count("Author") { d.many($0, "books").count > 5 } },
            c("@count many-to-many == 2", fetch("Book", M.compare(agg(.count, M.collection("Book", "tags"), nil), .equal, .integer(2), .integer))) { d in d.count("Book") { d.many($0, "tags").count == 2 } },
            c("@count of tag books > 3", fetch("Tag", M.compare(agg(.count, M.collection("Tag", "books"), nil), .greaterThan, .integer(3), .integer))) { d in d.count("Tag") { d.many($0, "books").count > 3 } },
            c("@count in double domain", fetch("Author", M.compare(agg(.count, books, nil), .greaterThan, .double(4.5), .double))) { d in d.count("Author") { d.many($0, "books").count > 4 } },
            c("@count in decimal domain", fetch("Author", M.compare(agg(.count, books, nil), .lessThanOrEqual, dec("2.5"), .decimal))) { d in d.count("Author") { d.many($0, "books").count <= 2 } },
            c("@sum int > 1000", fetch("Author", M.compare(agg(.sum, books, pages), .greaterThan, .integer(1000), .integer))) { d in d.count("Author") { pageSum(d, $0) > 1000 } },
            c("@sum int == 0 (empty is 0)", fetch("Author", M.compare(agg(.sum, books, pages), .equal, .integer(0), .integer))) { d in d.count("Author") { pageSum(d, $0) == 0 } },
            c("@sum int in double domain", fetch("Author", M.compare(agg(.sum, books, pages), .lessThan, .double(0.5), .double))) { d in d.count("Author") { pageSum(d, $0) < 1 } },
            c("@avg int > 100", fetch("Author", M.compare(agg(.avg, books, pages), .greaterThan, .integer(100), .double))) { d in
                d.count("Author") { a in
                    let values = d.many(a, "books").compactMap { D.int($0["pages"]) }
                    return !values.isEmpty && Double(values.reduce(0, +)) / Double(values.count) > 100
                }
            },
            c("@avg int == nil when empty", fetch("Author", M.compare(agg(.avg, books, pages), .equal, .null, .double))) { d in
                d.count("Author") { a in d.many(a, "books").compactMap { D.int($0["pages"]) }.isEmpty }
            },
            c("@sum decimal == 0.3 exactly", fetch("Author", M.compare(agg(.sum, books, price), .equal, dec("0.3"), .decimal))) { d in d.count("Author") { priceSum(d, $0) == Decimal(string: "0.3") } },
            c("@sum decimal == 0 (empty is 0)", fetch("Author", M.compare(agg(.sum, books, price), .equal, .integer(0), .decimal))) { d in d.count("Author") { priceSum(d, $0) == 0 } },
            c("@sum decimal > 100", fetch("Author", M.compare(agg(.sum, books, price), .greaterThan, .integer(100), .decimal))) { d in d.count("Author") { priceSum(d, $0) > 100 } },
            c("@avg decimal < 0", fetch("Author", M.compare(agg(.avg, books, price), .lessThan, .integer(0), .decimal))),
            c("@avg decimal == nil", fetch("Author", M.compare(agg(.avg, books, price), .equal, .null, .decimal))) { d in
                d.count("Author") { a in d.many(a, "books").compactMap { D.decimal($0["price"]) }.isEmpty }
            },
            c("@sum double > 1", fetch("Author", M.compare(agg(.sum, books, rating), .greaterThan, .integer(1), .double))),
            c("@sum double == 0.6 (order independent)", fetch("Author", M.compare(agg(.sum, books, rating), .equal, .double(0.6), .double))),
            c("@avg double BETWEEN", fetch("Author", M.list(agg(.avg, books, rating), .between, [.double(0.2), .double(1)], .double))),
            c("@sum float", fetch("Author", M.compare(agg(.sum, books, M.attribute("Book", "weight")), .greaterThan, .double(2), .double))),
            c("@sum double in decimal domain", fetch("Author", M.compare(agg(.sum, books, rating), .greaterThan, dec("0.5"), .decimal))),
            c("@min string == empty", fetch("Author", M.compare(agg(.min, books, M.attribute("Book", "title")), .equal, .string(""), .string))),
            c("@max string > Z", fetch("Author", M.compare(agg(.max, books, M.attribute("Book", "title")), .greaterThan, .string("Z"), .string))),
            c("@max string ==[c]", fetch("Author", M.compare(agg(.max, books, M.attribute("Book", "title")), .equal, .string("zoe"), .string, .caseInsensitive))),
            c("@min date", fetch("Author", M.compare(agg(.min, books, M.attribute("Book", "published")), .lessThan, date(-3e7), .date))),
            c("@max int64", fetch("Author", M.compare(agg(.max, books, M.attribute("Book", "copies")), .equal, .integer(Int64.max), .integer))),
            c("@min decimal", fetch("Author", M.compare(agg(.min, books, price), .lessThan, dec("-0.5"), .decimal))),
            c("@max decimal == nil when empty", fetch("Author", M.compare(agg(.max, books, price), .equal, .null, .decimal))),
            c("@min uuid != nil", fetch("Author", M.compare(agg(.min, books, M.attribute("Book", "isbn")), .notEqual, .null, .uuid))),
            c("@max binary", fetch("Author", M.compare(agg(.max, books, M.attribute("Book", "cover")), .equal, .binary(Data([0xFF, 0])), .binary))),
            c("@max bool", fetch("Author", M.compare(agg(.max, books, M.attribute("Book", "inPrint")), .equal, .boolean(true), .integer))),
            c("@sum bool", fetch("Author", M.compare(agg(.sum, books, M.attribute("Book", "inPrint")), .greaterThanOrEqual, .integer(3), .integer))),
            c("chapters @sum words > 3000", fetch("Book", M.compare(agg(.sum, M.collection("Book", "chapters"), M.attribute("Chapter", "words")), .greaterThan, .integer(3000), .integer))),
            c("chapters @max number == 5", fetch("Book", M.compare(agg(.max, M.collection("Book", "chapters"), M.attribute("Chapter", "number")), .equal, .integer(5), .integer))),
            c("to-one then @count", fetch("Book", M.compare(agg(.count, M.collection("Book", "author.books"), nil), .greaterThan, .integer(8), .integer))) { d in
                d.count("Book") { b in (d.one(b, "author").map { d.many($0, "books").count > 8 }) ?? false }
            },
            c("@count vs attribute", fetch("Author", M.compare(agg(.count, books, nil), .greaterThan, M.key("Author", "score"), .integer))),
            c("@sum vs @count", fetch("Author", M.compare(agg(.sum, books, M.attribute("Book", "inPrint")), .lessThan, agg(.count, books, nil), .integer))),
            c("NOT @avg > x", fetch("Author", .not(M.compare(agg(.avg, books, pages), .greaterThan, .integer(100), .double)))),
            c("inner aggregate in quantifier", fetch("Author", .quantified(.any, books, M.compare(agg(.count, M.collection("Book", "tags"), nil), .equal, .integer(3), .integer)))),
        ]
    }()

    static let subqueries: [AgreementCase] = {
        typealias D = FixtureData
        let books = M.collection("Author", "books")
        return [
            c("SUBQUERY count >= 2", fetch("Author", M.compare(.subqueryCount(books, .and([
                M.compare(M.key("Book", "pages"), .greaterThan, .integer(100), .integer),
                M.compare(M.key("Book", "inPrint"), .equal, .boolean(true), .integer),
            ])), .greaterThanOrEqual, .integer(2), .integer))) { d in
                d.count("Author") { a in
                    d.many(a, "books").filter { ((D.int($0["pages"]).map { $0 > 100 }) ?? false) && $0["inPrint"] == .boolean(true) }.count >= 2
                }
            },
            c("SUBQUERY count == 0", fetch("Book", M.compare(.subqueryCount(M.collection("Book", "tags"), M.compare(M.key("Tag", "name"), .beginsWith, .string("f"), .string, .caseInsensitive)), .equal, .integer(0), .integer))) { d in
                d.count("Book") { b in !d.many(b, "tags").contains { (D.text($0["name"], .caseInsensitive).map { $0.starts(with: D.bytes("f")) }) ?? false } }
            },
            c("SUBQUERY nested ANY", fetch("Author", M.compare(.subqueryCount(books, .quantified(.any, M.collection("Book", "tags"), M.compare(M.key("Tag", "name"), .equal, .string("art"), .string))), .greaterThan, .integer(0), .integer))) { d in
                d.count("Author") { a in d.many(a, "books").contains { b in d.many(b, "tags").contains { $0["name"] == .string("art") } } }
            },
            c("SUBQUERY with path inside", fetch("Author", M.compare(.subqueryCount(books, M.compare(M.key("Book", "author.mentor.name"), .notEqual, .null, .string)), .greaterThan, .integer(1), .integer))),
            c("SUBQUERY through to-one", fetch("Chapter", M.compare(.subqueryCount(M.collection("Chapter", "book.chapters"), M.compare(M.key("Chapter", "number"), .equal, .integer(0), .integer)), .equal, .integer(1), .integer))),
            c("SUBQUERY in double domain", fetch("Author", M.compare(.subqueryCount(books, .constant(true)), .greaterThan, .double(3.5), .double))) { d in d.count("Author") { d.many($0, "books").count > 3 } },
        ]
    }()

    static let entities: [AgreementCase] = {
        typealias D = FixtureData
        return [
            c("all books with subentities", fetch("Book")) { _ in 120 },
            c("books without subentities", fetch("Book", subentities: false)) { _ in 90 },
            c("ebooks", fetch("EBook")) { _ in 30 },
            c("ebook format ==[c] pdf", fetch("EBook", M.compare(M.key("EBook", "format"), .equal, .string("pdf"), .string, .caseInsensitive))) { d in
                d.count("EBook") { D.text($0["format"], .caseInsensitive) == D.bytes("pdf") }
            },
            c("ebook inherited attribute", fetch("EBook", M.compare(M.key("EBook", "pages"), .equal, .integer(100), .integer))) { d in d.count("EBook") { D.int($0["pages"]) == 100 } },
            c("ebook fileSize >", fetch("EBook", M.compare(M.key("EBook", "fileSize"), .greaterThan, .integer(50 * 1_048_576), .integer))) { d in
                d.count("EBook") { (D.int($0["fileSize"]).map { $0 > 50 * 1_048_576 }) ?? false }
            },
            c("books only with predicate", fetch("Book", M.compare(M.key("Book", "pages"), .equal, .integer(100), .integer), subentities: false)) { d in
                d.count("Book", subentities: false) { D.int($0["pages"]) == 100 }
            },
            c("authors", fetch("Author")) { _ in 20 },
            c("tags", fetch("Tag")) { _ in 15 },
            c("chapters", fetch("Chapter")) { _ in 60 },
            c("ANY over subentity destinations", fetch("Author", .quantified(.any, M.collection("Author", "books"), M.compare(M.object("Book", ""), .in, .list(FixtureData.shared.all("EBook").prefix(5).map { .object(M.id("EBook", $0.primaryKey)) }), .object)))),
        ]
    }()

    static let sorting: [AgreementCase] = {
        @Sendable func window(_ n: Int, _ limit: Int?, _ offset: Int) -> Int {
            let rest = max(0, n - offset)
            return limit.map { min($0, rest) } ?? rest
        }
        let titleSort = [M.sort("Book", "title")]
        return [
            c("sort title (nil first, ties by pk)", fetch("Book", sort: titleSort)) { _ in 120 },
            c("sort title desc (nil last)", fetch("Book", sort: [M.sort("Book", "title", ascending: false)])) { _ in 120 },
            c("sort title [c] desc", fetch("Book", sort: [M.sort("Book", "title", ascending: false, caseInsensitive: true)])) { _ in 120 },
            c("sort title [c] asc", fetch("Book", sort: [M.sort("Book", "title", caseInsensitive: true)])) { _ in 120 },
            c("sort author.name, pages desc", fetch("Book", sort: [M.sort("Book", "author.name"), M.sort("Book", "pages", ascending: false)])) { _ in 120 },
            c("sort author.mentor.name [c]", fetch("Book", sort: [M.sort("Book", "author.mentor.name", caseInsensitive: true)])) { _ in 120 },
            c("sort price asc", fetch("Book", sort: [M.sort("Book", "price")])) { _ in 120 },
            c("sort price desc", fetch("Book", sort: [M.sort("Book", "price", ascending: false)])) { _ in 120 },
            c("sort rating desc, published", fetch("Book", sort: [M.sort("Book", "rating", ascending: false), M.sort("Book", "published")])) { _ in 120 },
            c("sort isbn", fetch("Book", sort: [M.sort("Book", "isbn")])) { _ in 120 },
            c("sort cover desc", fetch("Book", sort: [M.sort("Book", "cover", ascending: false)])) { _ in 120 },
            c("sort inPrint, copies desc", fetch("Book", sort: [M.sort("Book", "inPrint"), M.sort("Book", "copies", ascending: false)])) { _ in 120 },
            c("sort weight", fetch("Book", sort: [M.sort("Book", "weight")])) { _ in 120 },
            c("sort link [c]", fetch("Book", sort: [M.sort("Book", "link", caseInsensitive: true)])) { _ in 120 },
            c("sort author name [c], score desc", fetch("Author", sort: [M.sort("Author", "name", caseInsensitive: true), M.sort("Author", "score", ascending: false)])) { _ in 20 },
            c("sort author rating (-0.0 and 0.0 tie)", fetch("Author", sort: [M.sort("Author", "rating")])) { _ in 20 },
            c("sort chapters by book.author.name, number", fetch("Chapter", sort: [M.sort("Chapter", "book.author.name"), M.sort("Chapter", "number")])) { _ in 60 },
            c("sort ebook fileSize desc limit 3", fetch("EBook", sort: [M.sort("EBook", "fileSize", ascending: false)], limit: 3)) { _ in 3 },
            c("limit 10", fetch("Book", sort: titleSort, limit: 10)) { _ in 10 },
            c("offset 5 limit 7", fetch("Book", sort: titleSort, limit: 7, offset: 5)) { _ in 7 },
            c("offset beyond the end", fetch("Book", sort: titleSort, offset: 200)) { _ in 0 },
            c("limit 0", fetch("Book", sort: titleSort, limit: 0)) { _ in 0 },
            c("offset without limit", fetch("Book", sort: titleSort, offset: 100)) { _ in 20 },
            c("limit without sort", fetch("Book", limit: 5)) { _ in 5 },
            c("filtered, sorted, windowed", fetch("Book", M.compare(M.key("Book", "pages"), .notEqual, .null, .integer), sort: [M.sort("Book", "pages"), M.sort("Book", "title", ascending: false)], limit: 10, offset: 3)) { d in
                window(d.count("Book") { FixtureData.int($0["pages"]) != nil }, 10, 3)
            },
            c("sort subentity attribute via parent", fetch("EBook", sort: [M.sort("EBook", "format", caseInsensitive: true), M.sort("EBook", "price", ascending: false)], offset: 2)) { _ in 28 },
        ]
    }()

    static let logic: [AgreementCase] = {
        typealias D = FixtureData
        let pages = M.key("Book", "pages")
        let title = M.key("Book", "title")
        return [
            c("TRUEPREDICATE", fetch("Book", .constant(true))) { _ in 120 },
            c("FALSEPREDICATE", fetch("Book", .constant(false))) { _ in 0 },
            c("AND []", fetch("Book", .and([]))) { _ in 120 },
            c("OR []", fetch("Book", .or([]))) { _ in 0 },
            c("NOT AND []", fetch("Book", .not(.and([])))) { _ in 0 },
            c("NOT OR []", fetch("Book", .not(.or([])))) { _ in 120 },
            c("NOT NOT", fetch("Book", .not(.not(M.compare(pages, .lessThan, .integer(100), .integer))))) { d in d.count("Book") { (D.int($0["pages"]).map { $0 < 100 }) ?? false } },
            c("OR of nil comparisons", fetch("Book", .or([M.compare(pages, .lessThan, .integer(0), .integer), M.compare(title, .beginsWith, .string("A"), .string)]))) { d in
                d.count("Book") { r in ((D.int(r["pages"]).map { $0 < 0 }) ?? false) || ((D.text(r["title"]).map { $0.starts(with: D.bytes("A")) }) ?? false) }
            },
            c("NOT (A AND B) with nils", fetch("Book", .not(.and([M.compare(pages, .greaterThan, .integer(0), .integer), M.compare(M.key("Book", "rating"), .greaterThan, .double(0.2), .double)])))) { d in
                d.count("Book") { r in !(((D.int(r["pages"]).map { $0 > 0 }) ?? false) && ((D.double(r["rating"]).map { $0 > 0.2 }) ?? false)) }
            },
            c("NOT (A OR B) with nils", fetch("Book", .not(.or([M.compare(pages, .greaterThan, .integer(0), .integer), M.compare(M.key("Book", "rating"), .greaterThan, .double(0.2), .double)])))) { d in
                d.count("Book") { r in !(((D.int(r["pages"]).map { $0 > 0 }) ?? false) || ((D.double(r["rating"]).map { $0 > 0.2 }) ?? false)) }
            },
            c("three-way AND and OR", fetch("Book", .or([
                .and([M.compare(pages, .equal, .integer(100), .integer), M.compare(title, .notEqual, .null, .string), .not(M.compare(M.key("Book", "inPrint"), .equal, .boolean(true), .integer))]),
                M.compare(M.key("Book", "author.name"), .equal, .string("Zoë"), .string),
                .constant(false),
            ]))),
            c("comparison of constants", fetch("Book", M.compare(.constant(.integer(1)), .lessThan, .constant(.integer(2)), .integer))) { _ in 120 },
        ]
    }()
}
