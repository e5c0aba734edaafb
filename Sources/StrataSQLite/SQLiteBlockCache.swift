import CStrataSQLite
import GRDBSQLite

/// The memory allocator this process's SQLite uses (`Sources/CStrataSQLite/block_cache.c`):
/// small blocks rounded up to a size class and kept, once freed, on the
/// freeing thread's list for its next allocation of the class.
///
/// SQLite allocates and frees the same few blocks on every run of a
/// statement (a cursor per table and index it opens, a record buffer per
/// row it builds). Its lookaside allocator is meant to serve those from
/// memory the connection keeps, but Debian's build leaves lookaside out,
/// so each one is a malloc and a free: about 10 per single-row insert and
/// 7 per indexed query. Installed when the library is loaded, before
/// anything can initialize SQLite, unless the environment sets
/// `STRATA_SQLITE_SYSTEM_MALLOC` or the build uses AddressSanitizer.
enum SQLiteBlockCache {
    /// Whether SQLite allocates through it.
    static var isInstalled: Bool { strata_sqlite_block_cache_installed() != 0 }

    /// How many freed blocks the calling thread keeps.
    static var threadCachedBlocks: Int { Int(strata_sqlite_block_cache_thread_count()) }

    /// How many freed blocks the calling thread keeps in the size class of
    /// an allocation of `bytes`.
    static func threadCachedBlocks(ofClassFor bytes: Int) -> Int {
        Int(strata_sqlite_block_cache_thread_count_of_class(Int64(bytes)))
    }

    // SQLite's allocation functions, for tests of the allocator itself.

    /// `sqlite3_malloc64`: at least `bytes` bytes, or nil.
    static func allocate(_ bytes: Int) -> UnsafeMutableRawPointer? { sqlite3_malloc64(sqlite3_uint64(bytes)) }

    /// `sqlite3_realloc64`: `memory` (nil: none) resized to `bytes`, its
    /// bytes kept up to the smaller size; nil when it failed (`memory` is
    /// then untouched).
    static func reallocate(_ memory: UnsafeMutableRawPointer?, _ bytes: Int) -> UnsafeMutableRawPointer? {
        sqlite3_realloc64(memory, sqlite3_uint64(bytes))
    }

    /// `sqlite3_free`.
    static func free(_ memory: UnsafeMutableRawPointer?) { sqlite3_free(memory) }

    /// `sqlite3_msize`: the usable bytes of `memory`.
    static func size(_ memory: UnsafeMutableRawPointer?) -> Int { Int(sqlite3_msize(memory)) }
}
