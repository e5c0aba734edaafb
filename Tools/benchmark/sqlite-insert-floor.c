// The floor under a durable Strata insert: raw SQLite doing the same writes
// as one `strata-server` insert of a Book, with no server around it.
//
// Same tables and indexes as the store Strata creates for the books
// workload (ZBOOK with indexes on title and pages and a unique one on uuid,
// the history transaction and change rows, the key table), WAL with
// synchronous=FULL (every commit synced), the autocheckpoint at Strata's
// default threshold, prepared statements, and commits in groups of G
// inserts, as the server's group commit writes them. Seeds 10,000 rows,
// then times N inserts and prints the process's CPU time (user + system)
// per insert.
//
// usage: sqlite-insert-floor DIR [G=24] [N=100000]
// Built and run by Tools/benchmark.sh (cc -O2 ... -lsqlite3).
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static sqlite3 *db;

static void check(int rc, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "sqlite-insert-floor: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static double wall_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec / 1e9;
}

static void run(sqlite3_stmt *statement, const char *what) {
    check(sqlite3_step(statement), what);
    sqlite3_reset(statement);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: sqlite-insert-floor DIR [GROUP=24] [INSERTS=100000]\n");
        return 2;
    }
    int group = argc > 2 ? atoi(argv[2]) : 24;
    int inserts = argc > 3 ? atoi(argv[3]) : 100000;
    if (group < 1 || inserts < 1) {
        fprintf(stderr, "sqlite-insert-floor: GROUP and INSERTS must be positive\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/floor.sqlite", argv[1]);
    check(sqlite3_open(path, &db), "open");
    // 40 MiB of 4 KiB pages: strata-server's default --wal-checkpoint-mb.
    check(sqlite3_exec(db,
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=10240;"
        "CREATE TABLE Z_PRIMARYKEY (Z_NAME TEXT PRIMARY KEY, Z_MAX INTEGER NOT NULL);"
        "INSERT INTO Z_PRIMARYKEY VALUES ('Book', 0);"
        "CREATE TABLE ZBOOK (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER NOT NULL, Z_OPT INTEGER NOT NULL,"
        " ZAUTHOR TEXT, ZCANONICALTITLE TEXT, ZCOVERCOLOR BLOB, ZPAGES INTEGER, ZPRICE TEXT,"
        " ZPUBLISHDATE REAL, ZTITLE TEXT, ZUUID BLOB);"
        "CREATE INDEX ZBOOK_BYTITLE ON ZBOOK (ZTITLE);"
        "CREATE INDEX ZBOOK_BYPAGES ON ZBOOK (ZPAGES);"
        "CREATE UNIQUE INDEX ZBOOK_UNIQUE_BOOK_UUID ON ZBOOK (ZUUID);"
        "CREATE TABLE Z_STRATA_HISTORY (Z_TOKEN INTEGER PRIMARY KEY AUTOINCREMENT, Z_TIMESTAMP REAL NOT NULL,"
        " Z_AUTHOR TEXT, Z_CONTEXT TEXT, Z_PROCESS INTEGER NOT NULL, Z_ORIGIN TEXT NOT NULL);"
        "CREATE TABLE Z_STRATA_HISTORY_CHANGE (Z_TOKEN INTEGER NOT NULL, Z_SEQ INTEGER NOT NULL,"
        " Z_TYPE INTEGER NOT NULL, Z_ENTITY TEXT NOT NULL, Z_KEY INTEGER NOT NULL, Z_VERSION INTEGER NOT NULL,"
        " Z_PROPERTIES TEXT NOT NULL, PRIMARY KEY (Z_TOKEN, Z_SEQ)) WITHOUT ROWID;",
        NULL, NULL, NULL), "schema");
    sqlite3_stmt *insert, *keys, *history, *change, *begin, *commit;
    check(sqlite3_prepare_v2(db, "INSERT INTO ZBOOK VALUES (?, 1, 1, ?, ?, NULL, ?, ?, ?, ?, ?)", -1, &insert, NULL), "prepare");
    check(sqlite3_prepare_v2(db, "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = 'Book'", -1, &keys, NULL), "prepare");
    check(sqlite3_prepare_v2(db, "INSERT INTO Z_STRATA_HISTORY (Z_TIMESTAMP, Z_AUTHOR, Z_CONTEXT, Z_PROCESS, Z_ORIGIN)"
        " VALUES (?, NULL, 'server', 1, 'floor')", -1, &history, NULL), "prepare");
    check(sqlite3_prepare_v2(db, "INSERT INTO Z_STRATA_HISTORY_CHANGE VALUES (?, 0, 0, 'Book', ?, 1, '')", -1, &change, NULL), "prepare");
    check(sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, NULL), "prepare");
    check(sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL), "prepare");

    const int seed = 10000;
    unsigned int state = 7;
    char title[64], canonical[64], author[32];
    unsigned char uuid[16];
    double cpu_start = 0, wall_start = 0;
    for (long i = 0; i < seed + inserts; i++) {
        int measuring = i >= seed;
        if (i == seed) {
            cpu_start = cpu_seconds();
            wall_start = wall_seconds();
        }
        long position = measuring ? i - seed : i;
        int size = measuring ? group : 1000;
        if (position % size == 0) run(begin, "begin");
        long key = i + 1;
        snprintf(title, sizeof title, "Book %u-%ld", rand_r(&state), i);
        snprintf(canonical, sizeof canonical, "book %ld", i);
        snprintf(author, sizeof author, "Author %u", rand_r(&state) % 997);
        for (int k = 0; k < 16; k++) uuid[k] = (unsigned char)rand_r(&state);
        sqlite3_bind_int64(insert, 1, key);
        sqlite3_bind_text(insert, 2, author, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(insert, 3, canonical, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(insert, 4, 1 + rand_r(&state) % 1000);
        sqlite3_bind_text(insert, 5, "12.5", -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(insert, 6, 1.7e9 + i);
        sqlite3_bind_text(insert, 7, title, -1, SQLITE_TRANSIENT);
        sqlite3_bind_blob(insert, 8, uuid, 16, SQLITE_TRANSIENT);
        run(insert, "insert");
        if (measuring) {
            // One history transaction and one change row per save.
            sqlite3_bind_double(history, 1, 1.7e9 + i);
            run(history, "history");
            sqlite3_bind_int64(change, 1, sqlite3_last_insert_rowid(db));
            sqlite3_bind_int64(change, 2, key);
            run(change, "history change");
        }
        if (position % size == size - 1 || i == seed + inserts - 1) {
            sqlite3_bind_int64(keys, 1, key);
            run(keys, "keys");
            run(commit, "commit");
        }
    }
    double cpu = cpu_seconds() - cpu_start, wall = wall_seconds() - wall_start;
    printf("%.1f %.0f\n", cpu * 1e6 / inserts, inserts / wall);
    sqlite3_finalize(insert); sqlite3_finalize(keys); sqlite3_finalize(history);
    sqlite3_finalize(change); sqlite3_finalize(begin); sqlite3_finalize(commit);
    sqlite3_close(db);
    return 0;
}
