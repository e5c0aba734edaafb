#ifndef STRATA_SQLITE_WAL_BUFFER_H
#define STRATA_SQLITE_WAL_BUFFER_H

#include <stdint.h>

/// The name of the VFS ``strata_sqlite_register_wal_buffer_vfs`` registers.
#define STRATA_WAL_BUFFER_VFS_NAME "strata-wal-buffer"

/// Registers, once per process, a VFS over SQLite's default one that gathers
/// the writes a transaction makes to its write-ahead log into one buffer and
/// writes them with one system call. SQLite writes each WAL frame as two
/// writes (its 24-byte header, then the page); a commit of twenty inserts
/// into a table with three indexes is about 120 `pwrite` calls, which this
/// makes one.
///
/// Only appends are gathered; a write over what the transaction already
/// wrote (a frame rewritten in place, rewritten checksums) goes straight to
/// the file. The buffer is written when SQLite has written a commit frame
/// (the transaction's last append), so that a failed write fails the commit
/// as it would without the buffer; and, before the call goes on, when SQLite
/// syncs the log, reads it, asks its size, truncates it, closes it, sends it
/// a file control, writes somewhere other than just after the buffer, or
/// touches the database's shared memory in a way that could publish the
/// log's new frames to other connections (its barrier, which comes before
/// readers can see a commit, and its locks). So no connection, in this
/// process or another, can read a frame that is still in the buffer, and a
/// commit is synced exactly as without the VFS.
///
/// A gathered write that fails loses the whole write transaction: from then
/// until its write lock is released, the log answers every write, read and
/// sync with SQLITE_IOERR_WRITE, so SQLite rolls all of it back (frames it
/// was told were written may be gone). In exclusive locking mode, which
/// takes no shared-memory locks, the connection stays failed until it is
/// closed. Logs of databases without power-safe overwrite (`psow=0`) are
/// not gathered.
/// Every other file (the database, journals, the shared memory) goes
/// straight to the default VFS.
///
/// Not declared with SQLite's types, so that this header does not declare
/// them a second time beside GRDB's module. Returns SQLite's result code
/// (0 when the VFS is registered, now or by an earlier call).
int strata_sqlite_register_wal_buffer_vfs(void);

/// A WAL file's writes: those SQLite asked for, and those the VFS made.
typedef struct {
    long long writesMade;
    long long writesAsked;
} StrataWALBufferCounts;

/// The file control (`sqlite3_file_control` on a connection's "main"
/// database, argument a `StrataWALBufferCounts *`) that reads the counts of
/// the connection's open WAL file (zeros when it has none).
#define STRATA_FCNTL_WAL_BUFFER_COUNTS 0x53545241

/// The file control (argument an `int *`) that makes the next N writes of
/// the connection's WAL buffer fail as a full disk would, for tests of what
/// a failed write does (SQLITE_NOTFOUND when no log is open).
#define STRATA_FCNTL_WAL_BUFFER_FAIL_FLUSHES 0x53545242

/// Whether this process's SQLite uses the page cache of `page_cache.c`:
/// SQLite's default cache, except that a truncation of the cache below
/// which no page can be cached is not passed on. Installed when the library
/// loads (before anything can initialize SQLite), unless the environment
/// sets `STRATA_SQLITE_DEFAULT_PAGE_CACHE`.
///
/// Why: when a B-tree split leaves new sibling pages out of order, SQLite
/// (3.40) swaps their numbers through the lock-byte page's number (262145
/// with 4 KiB pages); the default cache then takes every later truncation
/// (the end of each write transaction truncates the cache to the database's
/// size) as a reason to walk its whole hash table, about 30 µs a commit with
/// 11 MiB cached, more with a fuller cache.
int strata_sqlite_page_cache_installed(void);

/// Truncations of page caches (all connections of the process) that
/// ``strata_sqlite_page_cache_installed`` skipped, and those it passed on.
typedef struct {
    long long truncationsSkipped;
    long long truncationsPassed;
} StrataPageCacheCounts;

/// The process's counts so far.
StrataPageCacheCounts strata_sqlite_page_cache_counts(void);

/// Whether this process's SQLite allocates through `block_cache.c`: blocks
/// of at most 4 KiB rounded up to a size class, and a freed one kept on the
/// freeing thread's list for its class (a bounded number of them, 88 KiB a
/// thread at most, freed when the thread ends) for that thread's next
/// allocation of the class; larger blocks straight from malloc. It stands
/// in for SQLite's lookaside allocator, which Debian's build leaves out:
/// without either, every statement run mallocs and frees the same blocks
/// again (a cursor per table and index, a record buffer per row).
/// Installed when the library loads, unless the environment sets
/// `STRATA_SQLITE_SYSTEM_MALLOC` or the build uses AddressSanitizer (a
/// cached block would hide a use after free).
int strata_sqlite_block_cache_installed(void);

/// How many freed blocks the calling thread keeps for its next allocations.
int strata_sqlite_block_cache_thread_count(void);

/// How many freed blocks the calling thread keeps in the size class of an
/// allocation of `bytes` (0 past the largest class, which keeps none).
int strata_sqlite_block_cache_thread_count_of_class(int64_t bytes);

/// Whether this process's SQLite keeps no memory statistics
/// (`SQLITE_CONFIG_MEMSTATUS` off): set when the library loads (before
/// anything can initialize SQLite), unless the environment sets
/// `STRATA_SQLITE_MEMORY_STATISTICS`.
///
/// Why: with the statistics on, every allocation and free SQLite makes
/// takes one mutex of the whole process to count it, so threads reading
/// at once (two event loops, the store's writer) wait for one another's
/// allocations, each wait a sleep and a wake-up. Strata reads none of the
/// statistics (`sqlite3_memory_used`, `sqlite3_status`) and sets no soft
/// heap limit, which needs them.
int strata_sqlite_memory_statistics_off(void);

#endif
