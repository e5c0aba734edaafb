import Foundation
import GRDBSQLite
import Testing
@testable import StrataSQLite

/// SQLite's memory statistics (`Sources/CStrataSQLite/memory_statistics.c`):
/// off in this process, so that no allocation SQLite makes takes the
/// process-wide mutex that counts it.
@Suite struct SQLiteMemoryStatisticsTests {
    private static var optedOut: Bool { ProcessInfo.processInfo.environment["STRATA_SQLITE_MEMORY_STATISTICS"] != nil }

    @Test func theyAreOffUnlessTheEnvironmentKeepsThem() {
        #expect(SQLiteMemoryStatistics.areOff == !Self.optedOut)
    }

    /// SQLite's own count of memory in use does not move when it allocates:
    /// the setting is in effect, not only accepted.
    @Test(.enabled(if: SQLiteMemoryStatistics.areOff, "the environment keeps the statistics"))
    func anAllocationIsNotCounted() throws {
        let before = sqlite3_memory_used()
        let block = try #require(sqlite3_malloc64(1 << 20))
        defer { sqlite3_free(block) }
        #expect(sqlite3_memory_used() == before)
    }
}
