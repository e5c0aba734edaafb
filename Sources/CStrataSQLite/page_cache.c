// A page cache over SQLite's default one that skips truncations with
// nothing to remove. See CStrataSQLite.h.
//
// Why: when a B-tree split leaves the new sibling pages out of order,
// SQLite 3.40's balance_nonroot() swaps their numbers through a temporary
// number, the lock-byte page's (262145 with 4 KiB pages). The default cache
// remembers the largest number it ever held; at the end of every write
// transaction the pager truncates the cache to the database's size, and a
// remembered number that far past it makes the default cache walk its whole
// hash table (every bucket and every cached page) to find nothing. With
// random-key indexes that is most commits: about 30 µs a commit with 11 MiB
// cached, more with a fuller cache.
//
// This cache keeps its own bound: the largest number a page was created at
// or moved to, leaving out the swap's temporary number once the swap is
// over (SQLite never stores a page there: allocation skips it and reading
// it is corruption). A truncation below which no page can exist is not
// passed on; every other call goes to the default cache unchanged.

#include "CStrataSQLite.h"

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>

/// SQLite's lock-byte offset (`PENDING_BYTE`, moved only by test controls).
#define STRATA_PENDING_BYTE 0x40000000u

typedef struct {
    sqlite3_pcache *inner;
    /// The page number balance_nonroot() swaps through.
    unsigned int swapKey;
    /// No page with a larger number is cached, except at `swapKey` while
    /// `swapHeld`.
    unsigned int maxKey;
    /// A page was moved to `swapKey` and not yet moved away.
    int swapHeld;
} StrataPageCache;

static sqlite3_pcache_methods2 defaults;
static atomic_int installed;
static atomic_llong skipped;
static atomic_llong passed;

static int cacheInit(void *arg) {
    (void)arg;
    return defaults.xInit ? defaults.xInit(defaults.pArg) : SQLITE_OK;
}

static void cacheShutdown(void *arg) {
    (void)arg;
    if (defaults.xShutdown) defaults.xShutdown(defaults.pArg);
}

static sqlite3_pcache *cacheCreate(int pageSize, int extraSize, int purgeable) {
    StrataPageCache *cache = sqlite3_malloc(sizeof(StrataPageCache));
    if (cache == NULL) return NULL;
    cache->inner = defaults.xCreate(pageSize, extraSize, purgeable);
    if (cache->inner == NULL) {
        sqlite3_free(cache);
        return NULL;
    }
    cache->swapKey = pageSize > 0 ? STRATA_PENDING_BYTE / (unsigned int)pageSize + 1 : 0;
    cache->maxKey = 0;
    cache->swapHeld = 0;
    return (sqlite3_pcache *)cache;
}

static void cacheCachesize(sqlite3_pcache *p, int size) {
    defaults.xCachesize(((StrataPageCache *)p)->inner, size);
}

static int cachePagecount(sqlite3_pcache *p) {
    return defaults.xPagecount(((StrataPageCache *)p)->inner);
}

static sqlite3_pcache_page *cacheFetch(sqlite3_pcache *p, unsigned int key, int createFlag) {
    StrataPageCache *cache = (StrataPageCache *)p;
    sqlite3_pcache_page *page = defaults.xFetch(cache->inner, key, createFlag);
    // A fetch that may create counts, whatever the number (a page read at
    // the swap number stays counted until a truncation passes it on).
    if (page != NULL && createFlag != 0 && key > cache->maxKey) cache->maxKey = key;
    return page;
}

static void cacheUnpin(sqlite3_pcache *p, sqlite3_pcache_page *page, int discard) {
    defaults.xUnpin(((StrataPageCache *)p)->inner, page, discard);
}

static void cacheRekey(sqlite3_pcache *p, sqlite3_pcache_page *page, unsigned int oldKey, unsigned int newKey) {
    StrataPageCache *cache = (StrataPageCache *)p;
    defaults.xRekey(cache->inner, page, oldKey, newKey);
    if (newKey == cache->swapKey) {
        cache->swapHeld = 1;
        return;
    }
    if (oldKey == cache->swapKey) cache->swapHeld = 0;
    if (newKey > cache->maxKey) cache->maxKey = newKey;
}

static void cacheTruncate(sqlite3_pcache *p, unsigned int limit) {
    StrataPageCache *cache = (StrataPageCache *)p;
    // Pages numbered `limit` and above go: none can exist when every
    // number held is below `limit` and no swap is under way.
    if (!cache->swapHeld && cache->maxKey < limit) {
        atomic_fetch_add_explicit(&skipped, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&passed, 1, memory_order_relaxed);
    defaults.xTruncate(cache->inner, limit);
    if (limit > 0 && cache->maxKey >= limit) cache->maxKey = limit - 1;
    if (limit <= cache->swapKey) cache->swapHeld = 0;
}

static void cacheDestroy(sqlite3_pcache *p) {
    StrataPageCache *cache = (StrataPageCache *)p;
    defaults.xDestroy(cache->inner);
    sqlite3_free(cache);
}

static void cacheShrink(sqlite3_pcache *p) {
    if (defaults.xShrink) defaults.xShrink(((StrataPageCache *)p)->inner);
}

static sqlite3_pcache_methods2 wrapper = {
    .iVersion = 1,
    .pArg = NULL,
    .xInit = cacheInit,
    .xShutdown = cacheShutdown,
    .xCreate = cacheCreate,
    .xCachesize = cacheCachesize,
    .xPagecount = cachePagecount,
    .xFetch = cacheFetch,
    .xUnpin = cacheUnpin,
    .xRekey = cacheRekey,
    .xTruncate = cacheTruncate,
    .xDestroy = cacheDestroy,
    .xShrink = cacheShrink,
};

// At load, before anything in the process can have initialized SQLite
// (`sqlite3_config` is refused after that, and the default cache stays).
__attribute__((constructor)) static void strataInstallPageCache(void) {
    if (getenv("STRATA_SQLITE_DEFAULT_PAGE_CACHE") != NULL) return;
    sqlite3_pcache_methods2 current;
    if (sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &current) != SQLITE_OK) return;
    if (current.xCreate == NULL || current.xFetch == NULL || current.xTruncate == NULL) return;
    defaults = current;
    if (sqlite3_config(SQLITE_CONFIG_PCACHE2, &wrapper) == SQLITE_OK) {
        atomic_store_explicit(&installed, 1, memory_order_relaxed);
    }
}

int strata_sqlite_page_cache_installed(void) {
    return atomic_load_explicit(&installed, memory_order_relaxed);
}

StrataPageCacheCounts strata_sqlite_page_cache_counts(void) {
    StrataPageCacheCounts counts;
    counts.truncationsSkipped = atomic_load_explicit(&skipped, memory_order_relaxed);
    counts.truncationsPassed = atomic_load_explicit(&passed, memory_order_relaxed);
    return counts;
}
