import CStrataSQLite

/// SQLite's memory statistics, which this process turns off
/// (`Sources/CStrataSQLite/memory_statistics.c`) when the library loads,
/// unless the environment sets `STRATA_SQLITE_MEMORY_STATISTICS`.
///
/// With them on, SQLite counts every allocation and free under one mutex
/// of the whole process, so threads using SQLite at once (the event loops'
/// reads, the store's writer) wait for one another's allocations. Strata
/// reads none of the statistics and sets no soft heap limit (which needs
/// them).
enum SQLiteMemoryStatistics {
    /// Whether SQLite keeps no memory statistics in this process.
    static var areOff: Bool { strata_sqlite_memory_statistics_off() != 0 }
}
