/*
 * db.h -- a small SQLite wrapper in which every statement is a `sql.sqlite` event.
 *
 * The event wraps the statement's real execution (prepare, bind, step to the end,
 * finalize), so its duration is what the statement cost. Its payload carries:
 *   sql         the SQL text
 *   name        a label for the log line ("User Load", "TRANSACTION"; "SQL" if none)
 *   binds       the bound values, formatted ("[42, 'ada@example.com']")
 *   rows        rows returned (queries) or changed (INSERT/UPDATE/DELETE)
 *   status      "ok", or SQLite's description of the result code
 *   full_scan   table rows visited by full scans (SQLITE_STMTSTATUS_FULLSCAN_STEP):
 *               nonzero means no index helped
 *   vm_steps    virtual machine steps (SQLITE_STMTSTATUS_VM_STEP)
 *   exception   on failure: type "SQLiteError" and SQLite's error message
 */
#ifndef DEMO_DB_H
#define DEMO_DB_H

#include <stdint.h>
#include <stddef.h>
#include <sqlite3.h>
#include <hark.h>

typedef struct demo_db {
    sqlite3 *sqlite;
    hark_topic *sql_topic; /* "sql.sqlite" on the default notifier */
    uint64_t statements;   /* statements run so far (succeeded or not) */
    char last_error[256];  /* SQLite's message for the last statement that failed */
} demo_db;

/* One bound value: an integer or a text. */
typedef struct db_value {
    int is_text;
    int64_t i;
    const char *s;
} db_value;

#define DB_INT(v) ((db_value){0, (int64_t)(v), NULL})
#define DB_TEXT(v) ((db_value){1, 0, (v)})
/* DB_ARGS(DB_INT(1), DB_TEXT("x")) expands to the (array, count) pair db_run() takes. */
#define DB_ARGS(...)                                                                               \
    (const db_value[]){__VA_ARGS__},                                                               \
        (int)(sizeof((const db_value[]){__VA_ARGS__}) / sizeof(db_value))
#define DB_NO_ARGS NULL, 0

/*
 * Opens (creating if needed) the database at `path` (":memory:" for a private
 * in-memory one) and proves it is writable by a write that is rolled back. Refuses
 * an existing database that another program made (it would drop its tables).
 * On failure writes a message into err, removes a file it created, returns -1.
 */
int db_open(demo_db *db, const char *path, char *err, size_t errlen);
void db_close(demo_db *db);

/*
 * Runs one statement as a `sql.sqlite` event. `name` labels the log line (may be
 * NULL). Returns the rows returned or changed, or -1 when the statement failed
 * (the failure is in the event's payload, and in sqlite3_errmsg()).
 */
int64_t db_run(demo_db *db, const char *name, const char *sql, const db_value *args, int nargs);

/*
 * The same instrumentation as db_run() around an empty piece of work: the payload
 * is filled the same way but SQLite is not called. Used to measure what hark adds
 * to each statement.
 */
int64_t db_run_empty(demo_db *db, const char *name, const char *sql, const db_value *args,
                     int nargs);

#endif /* DEMO_DB_H */
