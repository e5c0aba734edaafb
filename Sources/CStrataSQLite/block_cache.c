// SQLite's memory allocator with a per-thread cache of small blocks. See
// CStrataSQLite.h.
//
// Why: SQLite allocates and frees the same few small blocks on every run of
// a statement (a cursor per table and index it opens, a record buffer per
// row it builds, the register memory it grows). SQLite's lookaside
// allocator exists to serve those from memory the connection keeps, but
// Debian's build leaves it out (SQLITE_OMIT_LOOKASIDE), so every one is a
// malloc and a free: about 10 per single-row INSERT and 7 per indexed query.
//
// Every block has an 8-byte header (its size class and usable size) before
// the 8-byte-aligned memory SQLite gets, as SQLite's own system allocator
// does. Blocks of at most 4 KiB are rounded up to a size class; a freed
// one is kept on the freeing thread's list for its class (at most
// `classLimit` of them) and handed out again by that thread's next
// allocation of the class. Larger blocks, and frees past a list's limit,
// go straight to malloc and free. A thread's lists are freed when it ends.
//
// Not installed under AddressSanitizer (a cached block would hide a use
// after free), nor when the environment sets STRATA_SQLITE_SYSTEM_MALLOC.

#include "CStrataSQLite.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CLASS_COUNT 8
/// A block's class when it is larger than the largest class.
#define LARGE_BLOCK UINT32_MAX

/// The usable bytes of each class.
static const uint32_t classBytes[CLASS_COUNT] = {32, 64, 128, 256, 512, 1024, 2048, 4096};
/// The most blocks of each class a thread keeps: at most 88 KiB a thread.
static const uint16_t classLimit[CLASS_COUNT] = {64, 64, 64, 64, 64, 16, 8, 8};

/// Before every block SQLite gets.
typedef struct {
    uint32_t sizeClass;
    /// Usable bytes (the class's, or the request rounded up to 8).
    uint32_t bytes;
} BlockHeader;

_Static_assert(sizeof(BlockHeader) == 8, "SQLite needs 8-byte-aligned memory after the header");

/// A cached block's memory, linking it into its class's list.
typedef struct FreeBlock {
    struct FreeBlock *next;
} FreeBlock;

typedef struct {
    FreeBlock *head[CLASS_COUNT];
    uint16_t count[CLASS_COUNT];
    /// The thread-exit destructor is registered for this thread.
    int armed;
    /// The thread is ending (or could not register its destructor): frees
    /// go straight to free().
    int closed;
} ThreadCache;

static _Thread_local ThreadCache threadCache;
static pthread_key_t exitKey;
static pthread_once_t exitKeyOnce = PTHREAD_ONCE_INIT;
static int exitKeyMade;
static atomic_int installed;

/// Frees the ending thread's cached blocks; later frees on it are not cached.
static void releaseThreadCache(void *value) {
    ThreadCache *cache = value;
    cache->closed = 1;
    for (int sizeClass = 0; sizeClass < CLASS_COUNT; sizeClass++) {
        FreeBlock *block = cache->head[sizeClass];
        while (block != NULL) {
            FreeBlock *next = block->next;
            free((BlockHeader *)block - 1);
            block = next;
        }
        cache->head[sizeClass] = NULL;
        cache->count[sizeClass] = 0;
    }
}

static void makeExitKey(void) {
    exitKeyMade = pthread_key_create(&exitKey, releaseThreadCache) == 0;
}

/// Registers the calling thread's destructor; false when that fails (the
/// thread then caches nothing, so nothing is left behind when it ends).
static int armThreadCache(ThreadCache *cache) {
    pthread_once(&exitKeyOnce, makeExitKey);
    if (exitKeyMade && pthread_setspecific(exitKey, cache) == 0) {
        cache->armed = 1;
        return 1;
    }
    cache->closed = 1;
    return 0;
}

/// The class holding `bytes`, or -1 when it is larger than every class.
static inline int classOf(uint64_t bytes) {
    for (int sizeClass = 0; sizeClass < CLASS_COUNT; sizeClass++) {
        if (bytes <= classBytes[sizeClass]) return sizeClass;
    }
    return -1;
}

static inline uint64_t roundUp8(uint64_t bytes) {
    return (bytes + 7) & ~(uint64_t)7;
}

static void *blockMalloc(int requested) {
    if (requested <= 0) return NULL;
    int sizeClass = classOf((uint64_t)requested);
    if (sizeClass < 0) {
        uint64_t bytes = roundUp8((uint64_t)requested);
        if (bytes > UINT32_MAX - sizeof(BlockHeader)) return NULL;
        BlockHeader *header = malloc(sizeof(BlockHeader) + bytes);
        if (header == NULL) return NULL;
        header->sizeClass = LARGE_BLOCK;
        header->bytes = (uint32_t)bytes;
        return header + 1;
    }
    ThreadCache *cache = &threadCache;
    FreeBlock *cached = cache->head[sizeClass];
    if (cached != NULL) {
        cache->head[sizeClass] = cached->next;
        cache->count[sizeClass] -= 1;
        return cached;
    }
    BlockHeader *header = malloc(sizeof(BlockHeader) + classBytes[sizeClass]);
    if (header == NULL) return NULL;
    header->sizeClass = (uint32_t)sizeClass;
    header->bytes = classBytes[sizeClass];
    return header + 1;
}

static void blockFree(void *memory) {
    if (memory == NULL) return;
    BlockHeader *header = (BlockHeader *)memory - 1;
    uint32_t sizeClass = header->sizeClass;
    ThreadCache *cache = &threadCache;
    if (sizeClass >= CLASS_COUNT || cache->closed || cache->count[sizeClass] >= classLimit[sizeClass]
        || (!cache->armed && !armThreadCache(cache))) {
        free(header);
        return;
    }
    FreeBlock *block = memory;
    block->next = cache->head[sizeClass];
    cache->head[sizeClass] = block;
    cache->count[sizeClass] += 1;
}

static int blockSize(void *memory) {
    if (memory == NULL) return 0;
    return (int)((BlockHeader *)memory - 1)->bytes;
}

static void *blockRealloc(void *memory, int requested) {
    if (memory == NULL) return blockMalloc(requested);
    if (requested <= 0) return NULL;
    BlockHeader *header = (BlockHeader *)memory - 1;
    // Still fits its class: the same block.
    if (header->sizeClass < CLASS_COUNT && (uint64_t)requested <= header->bytes) return memory;
    // Large to large: realloc, which may grow or shrink it in place.
    if (header->sizeClass == LARGE_BLOCK && classOf((uint64_t)requested) < 0) {
        uint64_t bytes = roundUp8((uint64_t)requested);
        if (bytes > UINT32_MAX - sizeof(BlockHeader)) return NULL;
        BlockHeader *resized = realloc(header, sizeof(BlockHeader) + bytes);
        if (resized == NULL) return NULL;
        resized->bytes = (uint32_t)bytes;
        return resized + 1;
    }
    void *moved = blockMalloc(requested);
    if (moved == NULL) return NULL;
    uint32_t kept = header->bytes < (uint32_t)requested ? header->bytes : (uint32_t)requested;
    memcpy(moved, memory, kept);
    blockFree(memory);
    return moved;
}

static int blockRoundup(int requested) {
    if (requested <= 0) return requested;
    int sizeClass = classOf((uint64_t)requested);
    if (sizeClass >= 0) return (int)classBytes[sizeClass];
    uint64_t bytes = roundUp8((uint64_t)requested);
    return bytes > INT32_MAX ? requested : (int)bytes;
}

static int blockInit(void *arg) {
    (void)arg;
    return SQLITE_OK;
}

static void blockShutdown(void *arg) {
    (void)arg;
}

static const sqlite3_mem_methods methods = {
    .xMalloc = blockMalloc,
    .xFree = blockFree,
    .xRealloc = blockRealloc,
    .xSize = blockSize,
    .xRoundup = blockRoundup,
    .xInit = blockInit,
    .xShutdown = blockShutdown,
    .pAppData = NULL,
};

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define STRATA_UNDER_ASAN 1
#endif

// At load, before anything in the process can have initialized SQLite
// (`sqlite3_config` is refused after that, and SQLite's allocator stays).
__attribute__((constructor)) static void strataInstallBlockCache(void) {
#ifdef STRATA_UNDER_ASAN
    return;
#else
    if (getenv("STRATA_SQLITE_SYSTEM_MALLOC") != NULL) return;
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) == SQLITE_OK) {
        atomic_store_explicit(&installed, 1, memory_order_relaxed);
    }
#endif
}

int strata_sqlite_block_cache_installed(void) {
    return atomic_load_explicit(&installed, memory_order_relaxed);
}

int strata_sqlite_block_cache_thread_count(void) {
    int total = 0;
    for (int sizeClass = 0; sizeClass < CLASS_COUNT; sizeClass++) total += threadCache.count[sizeClass];
    return total;
}

int strata_sqlite_block_cache_thread_count_of_class(int64_t bytes) {
    int sizeClass = bytes > 0 ? classOf((uint64_t)bytes) : -1;
    return sizeClass < 0 ? 0 : threadCache.count[sizeClass];
}
