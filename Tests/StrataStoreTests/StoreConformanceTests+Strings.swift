import Foundation
import Testing
import StrataModel
import StrataQuery
@testable import StrataStore

/// Strings holding U+0000 are whole everywhere: stored, bound as
/// constants and variables, compared, matched and ordered by every store
/// as the evaluator does (UTF-8 byte order), not cut at the NUL.
extension StoreConformanceTests {
    static let nulTexts = ["NUL", "NUL\u{0}inside", "A\u{0}b", "B", "a", "\u{0}", "Zed", "ÿ\u{0}", "nul\u{0}INSIDE"]

    @Test(arguments: StoreKind.allCases.filter { $0.holdsNUL })
    func stringsWithNULAreComparedWhole(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let temporary = Self.nulTexts.map { _ in ObjectID.temporary(entityName: "Sample") }
            let commit = try await F.commit(store, StoreChanges(inserts: zip(temporary, Self.nulTexts).map { id, text in
                .init(temporaryID: id, values: ["str": .string(text)])
            }))
            var textOf: [ObjectID: String] = [:]
            for (id, text) in zip(temporary, Self.nulTexts) { textOf[try #require(commit.permanentIDs[id])] = text }

            func matches(_ format: String, _ variables: [String: VariableValue] = [:]) async throws -> Set<String> {
                let ids = try await store.fetchObjectIDs(F.fetch("Sample", format, variables: variables))
                return Set(ids.compactMap { textOf[$0] })
            }
            let nul: VariableValue = .value(.string("\u{0}"))
            #expect(try await matches("str == $T", ["T": .value(.string("NUL\u{0}inside"))]) == ["NUL\u{0}inside"])
            #expect(try await matches("str == 'NUL'") == ["NUL"])
            #expect(try await matches("str != 'NUL' AND str BEGINSWITH 'NUL'") == ["NUL\u{0}inside"])
            #expect(try await matches("str CONTAINS $Z", ["Z": nul]) == ["NUL\u{0}inside", "A\u{0}b", "\u{0}", "ÿ\u{0}", "nul\u{0}INSIDE"])
            #expect(try await matches("str ENDSWITH $Z", ["Z": nul]) == ["\u{0}", "ÿ\u{0}"])
            #expect(try await matches("str ==[c] $T", ["T": .value(.string("NUL\u{0}INSIDE"))]) == ["NUL\u{0}inside", "nul\u{0}INSIDE"])
            #expect(try await matches("str IN $L", ["L": .list([.string("A\u{0}b"), .string("B"), .string("A")])]) == ["A\u{0}b", "B"])
            #expect(try await matches("str LIKE 'NUL*'") == ["NUL", "NUL\u{0}inside"])
            #expect(try await matches("str LIKE[c] 'nul?inside'") == ["NUL\u{0}inside", "nul\u{0}INSIDE"])
            // Ordering is by UTF-8 bytes, the NUL included.
            #expect(try await matches("str < 'B'") == ["A\u{0}b", "\u{0}"])
            #expect(try await matches("'B' > str") == ["A\u{0}b", "\u{0}"])
            #expect(try await matches("str > 'N'") == ["NUL", "NUL\u{0}inside", "a", "Zed", "ÿ\u{0}", "nul\u{0}INSIDE"])
            #expect(try await matches("str >= $T", ["T": .value(.string("NUL\u{0}"))]) == ["NUL\u{0}inside", "a", "Zed", "ÿ\u{0}", "nul\u{0}INSIDE"])
            #expect(try await matches("str BETWEEN {'A', 'C'}") == ["A\u{0}b", "B"])
            #expect(try await matches("str BETWEEN $R", ["R": .list([.string("A\u{0}"), .string("B\u{0}")])]) == ["A\u{0}b", "B"])
            // Every value reads back whole.
            for (id, text) in textOf {
                #expect(try await F.snapshot(store, id)["str"] == .string(text))
            }
            try await store.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aThousandOrTermsRun(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let temporary = (0..<20).map { _ in ObjectID.temporary(entityName: "Sample") }
            try await F.commit(store, StoreChanges(inserts: temporary.enumerated().map { i, id in
                .init(temporaryID: id, values: ["i64": .integer(Int64(i)), "str": .string("s\(i)")])
            }))
            // 1,200 terms, every third an equality on a string: SQLite's
            // expression-depth limit (1000) would refuse them chained.
            let terms = (0..<1200).map { i in i % 3 == 0 ? "str == 's\(i)'" : "i64 == \(i)" }
            let ids = try await store.fetchObjectIDs(F.fetch("Sample", terms.joined(separator: " OR ")))
            // Objects 0…19 each match a term, by their string or their number.
            #expect(ids.count == 20)
            let count = try await store.count(F.fetch("Sample", "(" + terms.joined(separator: " OR ") + ") AND i64 < 10"))
            #expect(count == 10)
            try await store.close()
        }
    }
}
