import Foundation
import StrataModel
import Testing
@testable import StrataQuery
import StrataPostgres
import StrataPostgresTesting

/// The predicate agreement suite (``AgreementCases``) against PostgreSQL:
/// every case compiled by ``PostgresDialect`` and run on a real server
/// returns exactly the evaluator's primary keys, in its order, and its
/// count query agrees. The cases PostgreSQL has no agreeing SQL for are
/// refused with ``StrataError/Code/unsupported`` naming the construct, and
/// are listed here: a listed case that compiles fails the test, so the list
/// only ever shrinks.
@Suite(.enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipComment)), .timeLimit(.minutes(1)))
struct PostgresAgreementTests {
    /// The cases refused, each for a construct of its own fetch.
    static let refused: Set<String> = [
        // MATCHES[c]: PostgreSQL's case-insensitive matching in the C
        // collation folds ASCII letters only, ICU's every letter.
        "MATCHES[c]",
    ]

    @Test(arguments: AgreementCases.all)
    func evaluatorAndPostgresAgree(_ testCase: AgreementCase) async throws {
        let fixture = try await PostgresQueryFixture.shared()
        let memory = try fixture.memory(testCase.fetch)
        do {
            let sql = try await fixture.sql(testCase.fetch)
            #expect(!Self.refused.contains(testCase.name), "\(testCase.name) now compiles: take it off the refused list")
            #expect(memory == sql, "\(testCase.name): memory \(memory) vs PostgreSQL \(sql)")
        } catch let error as StrataError where error.code == .unsupported {
            #expect(Self.refused.contains(testCase.name), "\(testCase.name) refused: \(error.message)")
        }
    }

    @Test func everyRefusedCaseExists() {
        let names = Set(AgreementCases.all.map(\.name))
        #expect(Self.refused.subtracting(names).isEmpty)
    }
}
