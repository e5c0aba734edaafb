import CStrataSQLite

/// The page cache this process's SQLite uses (`Sources/CStrataSQLite/page_cache.c`):
/// SQLite's default cache, with truncations below which no page can be
/// cached not passed on.
///
/// SQLite 3.40 swaps the numbers of out-of-order sibling pages after a
/// B-tree split through the lock-byte page's number (262145 with 4 KiB
/// pages). The default cache keeps the largest number it ever held, so each
/// later end of a write transaction, which truncates the cache to the
/// database's size, walks the whole cache to remove nothing: with
/// random-key indexes, most group commits (about 30 µs of CPU a commit with
/// 11 MiB cached, more as the cache fills). Installed when the library is
/// loaded, before anything can initialize SQLite, unless the environment
/// sets `STRATA_SQLITE_DEFAULT_PAGE_CACHE` (then SQLite's cache is used
/// as it is).
enum SQLitePageCache {
    /// Whether SQLite uses it.
    static var isInstalled: Bool { strata_sqlite_page_cache_installed() != 0 }

    /// Cache truncations it skipped and passed on so far, all connections
    /// of the process together.
    static var counts: (skipped: Int, passed: Int) {
        let counts = strata_sqlite_page_cache_counts()
        return (Int(counts.truncationsSkipped), Int(counts.truncationsPassed))
    }
}
