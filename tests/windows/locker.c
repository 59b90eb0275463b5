/* Test set-up only, never shipped: a Windows process that holds a trae-mem
 * database's write lock until its standard input closes, as an import or
 * another writer would. The spool test under Wine needs the lock taken by a
 * Windows process: a lock taken from Linux is invisible to Wine's own file
 * locks (SQLite's Windows build locks with LockFileEx). Built by
 * scripts/test with mingw-w64 and the SQLite amalgamation that rusqlite
 * bundles (libsqlite3-sys), so both sides run the same SQLite. */
#include <stdio.h>
#include "sqlite3.h"

int main(int argc, char **argv) {
    sqlite3 *db;
    char *error = 0;
    if (argc != 2 || sqlite3_open(argv[1], &db) != SQLITE_OK) {
        fprintf(stderr, "usage: locker DATABASE\n");
        return 2;
    }
    if (sqlite3_exec(db, "BEGIN IMMEDIATE; INSERT INTO store_meta VALUES ('lock', 'held');", 0, 0, &error)
        != SQLITE_OK) {
        fprintf(stderr, "cannot lock: %s\n", error);
        return 1;
    }
    printf("locked\n");
    fflush(stdout);
    while (getchar() != EOF) {
    }
    sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
    sqlite3_close(db);
    return 0;
}
