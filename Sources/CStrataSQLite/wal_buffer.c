// A VFS that gathers the writes SQLite makes to a write-ahead log; see
// include/CStrataSQLite.h for what it does and when the buffer is written.
#include <pthread.h>
#include <string.h>
#include <sqlite3.h>
#include "CStrataSQLite.h"

/// The buffer's size: a commit larger than this is written in several calls.
#define WAL_BUFFER_BYTES (1 << 20)
/// The most one call to the default VFS writes: the unix VFS keeps only the
/// low 17 bits of a write's size (it never writes more than a page), so a
/// larger write would be cut short.
#define WRITE_CHUNK_BYTES (31 * 4096)
/// The size of a WAL frame's header.
#define WAL_FRAME_HEADER_BYTES 24

typedef struct BufferedFile BufferedFile;
struct BufferedFile {
    sqlite3_file base;        // Must come first: SQLite sees this.
    sqlite3_file *real;       // The default VFS's file, just after this struct.
    int isWAL;
    int buffers;              // A WAL file whose appends are gathered.
    BufferedFile *database;   // A WAL file: its database file (this VFS's).
    BufferedFile *wal;        // A database file: its open WAL file, if any.
    unsigned char *buffer;    // A WAL file's pending bytes (allocated on first use).
    int length;               // Bytes pending.
    sqlite3_int64 offset;     // Where the pending bytes go in the file.
    sqlite3_int64 appendEnd;  // The end of what this write transaction has written.
    int commitFrameNext;      // The last write was a commit frame's header.
    int failed;               // A gathered write failed: this transaction is lost.
    int failFlushes;          // Tests: how many coming flushes fail (SQLITE_FULL).
    StrataWALBufferCounts counts; // A WAL file's writes, asked and made.
};

static sqlite3_vfs bufferVFS;
static sqlite3_vfs *realVFS;

/// Writes a WAL file's pending bytes.
///
/// SQLite was told the pending writes succeeded, and may have moved on: a
/// frame spilled from the page cache is read back later in the transaction.
/// So a failure here loses the write transaction, not a statement of it:
/// the file is marked failed, every write, read and sync of it answers
/// SQLITE_IOERR_WRITE (SQLite then rolls the whole transaction back; a
/// SQLITE_FULL would let it roll back one statement and commit the rest)
/// until the transaction's write lock is released.
static int flushPending(BufferedFile *file) {
    int length = file->length;
    file->length = 0;
    for (int written = 0; written < length;) {
        int chunk = length - written < WRITE_CHUNK_BYTES ? length - written : WRITE_CHUNK_BYTES;
        file->counts.writesMade += 1;
        int rc;
        if (file->failFlushes > 0) {
            file->failFlushes -= 1;
            rc = SQLITE_FULL;
        } else {
            rc = file->real->pMethods->xWrite(file->real, file->buffer + written, chunk, file->offset + written);
        }
        if (rc != SQLITE_OK) {
            file->failed = 1;
            return SQLITE_IOERR_WRITE;
        }
        written += chunk;
    }
    return SQLITE_OK;
}

/// Flushes, and answers SQLITE_IOERR_WRITE when this or an earlier flush of
/// the transaction failed.
static int flushOrFail(BufferedFile *file) {
    if (file->failed) return SQLITE_IOERR_WRITE;
    return flushPending(file);
}

static int bufferedClose(sqlite3_file *pFile) {
    BufferedFile *file = (BufferedFile *)pFile;
    int rc = flushOrFail(file);
    if (file->isWAL && file->database && file->database->wal == file) file->database->wal = NULL;
    if (!file->isWAL && file->wal) file->wal->database = NULL;
    sqlite3_free(file->buffer);
    file->buffer = NULL;
    int closeRC = file->real->pMethods->xClose(file->real);
    return rc != SQLITE_OK ? rc : closeRC;
}

static int bufferedRead(sqlite3_file *pFile, void *data, int amount, sqlite3_int64 offset) {
    BufferedFile *file = (BufferedFile *)pFile;
    int rc = flushOrFail(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xRead(file->real, data, amount, offset);
}

/// A write straight to the file, counted.
static int writeThrough(BufferedFile *file, const void *data, int amount, sqlite3_int64 offset) {
    file->counts.writesMade += 1;
    return file->real->pMethods->xWrite(file->real, data, amount, offset);
}

static int bufferedWrite(sqlite3_file *pFile, const void *data, int amount, sqlite3_int64 offset) {
    BufferedFile *file = (BufferedFile *)pFile;
    if (!file->isWAL) return file->real->pMethods->xWrite(file->real, data, amount, offset);
    file->counts.writesAsked += 1;
    if (file->failed) return SQLITE_IOERR_WRITE;
    if (!file->buffers) return writeThrough(file, data, amount, offset);
    // Only appends are gathered. A write over what this transaction wrote
    // before (a frame rewritten in place, the checksums SQLite rewrites
    // after the commit frame) goes to the file now, after what is pending,
    // so that its error reaches the call SQLite made. A new log's header
    // (offset 0) starts appending again.
    if (offset == 0) file->appendEnd = 0;
    if (offset < file->appendEnd) {
        int rc = flushPending(file);
        if (rc != SQLITE_OK) return rc;
        return writeThrough(file, data, amount, offset);
    }
    if (file->length > 0 && (offset != file->offset + file->length || file->length + amount > WAL_BUFFER_BYTES)) {
        int rc = flushPending(file);
        if (rc != SQLITE_OK) return rc;
    }
    if (file->buffer == NULL) file->buffer = sqlite3_malloc(WAL_BUFFER_BYTES);
    if (amount > WAL_BUFFER_BYTES || file->buffer == NULL) {
        // Pages are at most 64 KiB; without memory, write through (nothing
        // is pending: the buffer was never allocated).
        file->appendEnd = offset + amount;
        return writeThrough(file, data, amount, offset);
    }
    if (file->length == 0) file->offset = offset;
    memcpy(file->buffer + file->length, data, (size_t)amount);
    file->length += amount;
    file->appendEnd = offset + amount;
    // The WAL format (sqlite.org/fileformat.html): a frame is a 24-byte
    // header, then the page; bytes 4-7 of a commit frame's header hold the
    // database's size, zero in every other frame. The commit frame's page
    // is the transaction's last append: write the frames now, so that a
    // failed write fails the commit, as it would without the buffer,
    // whatever the connection's `synchronous` setting.
    if (file->commitFrameNext && amount != WAL_FRAME_HEADER_BYTES) {
        file->commitFrameNext = 0;
        return flushPending(file);
    }
    if (amount == WAL_FRAME_HEADER_BYTES) {
        const unsigned char *header = data;
        file->commitFrameNext = (header[4] | header[5] | header[6] | header[7]) != 0;
    }
    return SQLITE_OK;
}

static int bufferedTruncate(sqlite3_file *pFile, sqlite3_int64 size) {
    BufferedFile *file = (BufferedFile *)pFile;
    int rc = flushOrFail(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xTruncate(file->real, size);
}

static int bufferedSync(sqlite3_file *pFile, int flags) {
    BufferedFile *file = (BufferedFile *)pFile;
    int rc = flushOrFail(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xSync(file->real, flags);
}

static int bufferedFileSize(sqlite3_file *pFile, sqlite3_int64 *size) {
    BufferedFile *file = (BufferedFile *)pFile;
    int rc = flushOrFail(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xFileSize(file->real, size);
}

static int bufferedLock(sqlite3_file *pFile, int level) {
    BufferedFile *file = (BufferedFile *)pFile;
    return file->real->pMethods->xLock(file->real, level);
}

static int bufferedUnlock(sqlite3_file *pFile, int level) {
    BufferedFile *file = (BufferedFile *)pFile;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int bufferedCheckReservedLock(sqlite3_file *pFile, int *result) {
    BufferedFile *file = (BufferedFile *)pFile;
    return file->real->pMethods->xCheckReservedLock(file->real, result);
}

static int bufferedFileControl(sqlite3_file *pFile, int op, void *argument) {
    BufferedFile *file = (BufferedFile *)pFile;
    if (op == STRATA_FCNTL_WAL_BUFFER_COUNTS) {
        StrataWALBufferCounts none = {0, 0};
        *(StrataWALBufferCounts *)argument = file->isWAL ? file->counts : (file->wal ? file->wal->counts : none);
        return SQLITE_OK;
    }
    if (op == STRATA_FCNTL_WAL_BUFFER_FAIL_FLUSHES) {
        BufferedFile *wal = file->isWAL ? file : file->wal;
        if (wal == NULL) return SQLITE_NOTFOUND;
        wal->failFlushes = *(int *)argument;
        return SQLITE_OK;
    }
    int rc = flushOrFail(file);
    if (rc != SQLITE_OK) return rc;
    if (op == SQLITE_FCNTL_VFSNAME) {
        // Name this VFS in front of the default one's name.
        int innerRC = file->real->pMethods->xFileControl(file->real, op, argument);
        char *inner = innerRC == SQLITE_OK ? *(char **)argument : NULL;
        *(char **)argument = sqlite3_mprintf("%s/%s", bufferVFS.zName, inner ? inner : realVFS->zName);
        sqlite3_free(inner);
        return SQLITE_OK;
    }
    return file->real->pMethods->xFileControl(file->real, op, argument);
}

static int bufferedSectorSize(sqlite3_file *pFile) {
    BufferedFile *file = (BufferedFile *)pFile;
    return file->real->pMethods->xSectorSize(file->real);
}

static int bufferedDeviceCharacteristics(sqlite3_file *pFile) {
    BufferedFile *file = (BufferedFile *)pFile;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

static int bufferedShmMap(sqlite3_file *pFile, int page, int pageSize, int extend, void volatile **memory) {
    BufferedFile *file = (BufferedFile *)pFile;
    return file->real->pMethods->xShmMap(file->real, page, pageSize, extend, memory);
}

/// The shared-memory lock SQLite's WAL code holds for a write transaction
/// (`WAL_WRITE_LOCK` in wal.c).
#define WAL_WRITE_LOCK_OFFSET 0

static int bufferedShmLock(sqlite3_file *pFile, int offset, int n, int flags) {
    BufferedFile *file = (BufferedFile *)pFile;
    BufferedFile *wal = file->wal;
    if (wal && (flags & SQLITE_SHM_UNLOCK)) {
        // Always release: SQLite ignores an unlock's result. What is still
        // pending here belongs to a transaction that was rolled back (a
        // commit writes its frames at its commit frame), so losing it
        // loses nothing.
        (void)flushPending(wal);
        if (offset <= WAL_WRITE_LOCK_OFFSET && WAL_WRITE_LOCK_OFFSET < offset + n && (flags & SQLITE_SHM_EXCLUSIVE)) {
            // The write transaction is over: the next starts clean.
            wal->failed = 0;
            wal->appendEnd = 0;
            wal->commitFrameNext = 0;
        }
    } else if (wal) {
        int rc = flushPending(wal);
        if (rc != SQLITE_OK) return rc;
    }
    return file->real->pMethods->xShmLock(file->real, offset, n, flags);
}

static void bufferedShmBarrier(sqlite3_file *pFile) {
    BufferedFile *file = (BufferedFile *)pFile;
    // A commit's frames become visible to readers when SQLite writes the
    // log index's header, around this barrier. The logs this VFS gathers
    // (power-safe, see bufferedOpen) have written every append at the commit
    // frame, and write overwrites through, so nothing is pending here; this
    // is a guard. A failure here could not be reported: the commit goes on
    // and releases its write lock next, which clears the failed mark.
    if (file->wal) (void)flushPending(file->wal);
    file->real->pMethods->xShmBarrier(file->real);
}

static int bufferedShmUnmap(sqlite3_file *pFile, int deleteFlag) {
    BufferedFile *file = (BufferedFile *)pFile;
    return file->real->pMethods->xShmUnmap(file->real, deleteFlag);
}

static int bufferedFetch(sqlite3_file *pFile, sqlite3_int64 offset, int amount, void **pointer) {
    BufferedFile *file = (BufferedFile *)pFile;
    int rc = flushOrFail(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xFetch(file->real, offset, amount, pointer);
}

static int bufferedUnfetch(sqlite3_file *pFile, sqlite3_int64 offset, void *pointer) {
    BufferedFile *file = (BufferedFile *)pFile;
    return file->real->pMethods->xUnfetch(file->real, offset, pointer);
}

// One method table per version SQLite's own files may have: a file must not
// claim methods (shared memory, memory mapping) its real file lacks.
#define BUFFERED_METHODS(version) { \
    version, bufferedClose, bufferedRead, bufferedWrite, bufferedTruncate, bufferedSync, \
    bufferedFileSize, bufferedLock, bufferedUnlock, bufferedCheckReservedLock, \
    bufferedFileControl, bufferedSectorSize, bufferedDeviceCharacteristics, \
    bufferedShmMap, bufferedShmLock, bufferedShmBarrier, bufferedShmUnmap, \
    bufferedFetch, bufferedUnfetch }
static const sqlite3_io_methods bufferedMethods[3] = {
    BUFFERED_METHODS(1), BUFFERED_METHODS(2), BUFFERED_METHODS(3),
};

static int bufferedOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *pFile, int flags, int *outFlags) {
    (void)vfs;
    BufferedFile *file = (BufferedFile *)pFile;
    memset(file, 0, sizeof(*file));
    file->real = (sqlite3_file *)&file[1];
    int rc = realVFS->xOpen(realVFS, name, file->real, flags, outFlags);
    const sqlite3_io_methods *realMethods = file->real->pMethods;
    if (realMethods == NULL) {
        file->base.pMethods = NULL;
        return rc;
    }
    int version = realMethods->iVersion < 1 ? 1 : (realMethods->iVersion > 3 ? 3 : realMethods->iVersion);
    file->base.pMethods = &bufferedMethods[version - 1];
    if (rc == SQLITE_OK && (flags & SQLITE_OPEN_WAL) && name) {
        file->isWAL = 1;
        BufferedFile *database = (BufferedFile *)sqlite3_database_file_object(name);
        // Only a database opened through this VFS has these fields.
        if (database && (database->base.pMethods == &bufferedMethods[0] || database->base.pMethods == &bufferedMethods[1]
                         || database->base.pMethods == &bufferedMethods[2])) {
            file->database = database;
            database->wal = file;
            // Without power-safe overwrite (a `psow=0` URI) SQLite pads a
            // commit to a sector boundary and writes the last padding after
            // the sync, so a commit's appends would not end at its commit
            // frame; such logs are not gathered. SQLite decides it from the
            // database file, not the log (the unix VFS applies `psow` to the
            // database file only), and so does this. A log whose database
            // file is unknown is not gathered either: nothing would write
            // its buffer at the shared-memory barrier.
            sqlite3_file *databaseFile = database->real;
            file->buffers = (databaseFile->pMethods->xDeviceCharacteristics(databaseFile) & SQLITE_IOCAP_POWERSAFE_OVERWRITE) != 0;
        }
    }
    return rc;
}

static int forwardDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs; return realVFS->xDelete(realVFS, name, syncDirectory);
}
static int forwardAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs; return realVFS->xAccess(realVFS, name, flags, result);
}
static int forwardFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs; return realVFS->xFullPathname(realVFS, name, size, out);
}
static void *forwardDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs; return realVFS->xDlOpen(realVFS, name);
}
static void forwardDlError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs; realVFS->xDlError(realVFS, size, message);
}
static void (*forwardDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs; return realVFS->xDlSym(realVFS, handle, symbol);
}
static void forwardDlClose(sqlite3_vfs *vfs, void *handle) {
    (void)vfs; realVFS->xDlClose(realVFS, handle);
}
static int forwardRandomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs; return realVFS->xRandomness(realVFS, size, out);
}
static int forwardSleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs; return realVFS->xSleep(realVFS, microseconds);
}
static int forwardCurrentTime(sqlite3_vfs *vfs, double *now) {
    (void)vfs; return realVFS->xCurrentTime(realVFS, now);
}
static int forwardGetLastError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs; return realVFS->xGetLastError ? realVFS->xGetLastError(realVFS, size, message) : 0;
}
static int forwardCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    (void)vfs; return realVFS->xCurrentTimeInt64(realVFS, now);
}
static int forwardSetSystemCall(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr call) {
    (void)vfs; return realVFS->xSetSystemCall(realVFS, name, call);
}
static sqlite3_syscall_ptr forwardGetSystemCall(sqlite3_vfs *vfs, const char *name) {
    (void)vfs; return realVFS->xGetSystemCall(realVFS, name);
}
static const char *forwardNextSystemCall(sqlite3_vfs *vfs, const char *name) {
    (void)vfs; return realVFS->xNextSystemCall(realVFS, name);
}

static int registrationResult = SQLITE_ERROR;
static pthread_once_t registrationOnce = PTHREAD_ONCE_INIT;

static void registerOnce(void) {
    int rc = sqlite3_initialize();
    if (rc != SQLITE_OK) { registrationResult = rc; return; }
    realVFS = sqlite3_vfs_find(NULL);
    if (realVFS == NULL) { registrationResult = SQLITE_ERROR; return; }
    bufferVFS.iVersion = realVFS->iVersion < 3 ? realVFS->iVersion : 3;
    bufferVFS.szOsFile = (int)sizeof(BufferedFile) + realVFS->szOsFile;
    bufferVFS.mxPathname = realVFS->mxPathname;
    bufferVFS.zName = STRATA_WAL_BUFFER_VFS_NAME;
    bufferVFS.xOpen = bufferedOpen;
    bufferVFS.xDelete = forwardDelete;
    bufferVFS.xAccess = forwardAccess;
    bufferVFS.xFullPathname = forwardFullPathname;
    bufferVFS.xDlOpen = realVFS->xDlOpen ? forwardDlOpen : NULL;
    bufferVFS.xDlError = realVFS->xDlError ? forwardDlError : NULL;
    bufferVFS.xDlSym = realVFS->xDlSym ? forwardDlSym : NULL;
    bufferVFS.xDlClose = realVFS->xDlClose ? forwardDlClose : NULL;
    bufferVFS.xRandomness = forwardRandomness;
    bufferVFS.xSleep = forwardSleep;
    bufferVFS.xCurrentTime = forwardCurrentTime;
    bufferVFS.xGetLastError = forwardGetLastError;
    if (bufferVFS.iVersion >= 2) bufferVFS.xCurrentTimeInt64 = forwardCurrentTimeInt64;
    if (bufferVFS.iVersion >= 3) {
        bufferVFS.xSetSystemCall = realVFS->xSetSystemCall ? forwardSetSystemCall : NULL;
        bufferVFS.xGetSystemCall = realVFS->xGetSystemCall ? forwardGetSystemCall : NULL;
        bufferVFS.xNextSystemCall = realVFS->xNextSystemCall ? forwardNextSystemCall : NULL;
    }
    registrationResult = sqlite3_vfs_register(&bufferVFS, 0);
}

int strata_sqlite_register_wal_buffer_vfs(void) {
    pthread_once(&registrationOnce, registerOnce);
    return registrationResult;
}

