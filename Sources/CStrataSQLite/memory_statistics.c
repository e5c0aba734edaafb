// SQLite without its memory statistics. See CStrataSQLite.h.

#include "CStrataSQLite.h"

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>

static atomic_int off = 0;

// At load, before anything in the process can have initialized SQLite
// (`sqlite3_config` is refused after that, and the statistics stay on).
__attribute__((constructor)) static void strataTurnOffMemoryStatistics(void) {
    if (getenv("STRATA_SQLITE_MEMORY_STATISTICS") != NULL) return;
    if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK) {
        atomic_store_explicit(&off, 1, memory_order_relaxed);
    }
}

int strata_sqlite_memory_statistics_off(void) {
    return atomic_load_explicit(&off, memory_order_relaxed);
}
