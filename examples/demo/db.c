/* db.c -- every statement the demo runs goes through db_run(), one `sql.sqlite` event each. */
#include "db.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* PRAGMA application_id of databases this demo made: "hark" in ASCII. */
#define DEMO_APP_ID 0x6861726b

/* What running one statement produced. */
typedef struct outcome {
    int rc;          /* SQLITE_OK or the failure's result code */
    int64_t rows;    /* rows returned, or changed for statements without results */
    int full_scan;   /* SQLITE_STMTSTATUS_FULLSCAN_STEP */
    int vm_steps;    /* SQLITE_STMTSTATUS_VM_STEP */
    char error[256]; /* SQLite's message when rc != SQLITE_OK */
} outcome;

/* The statement's real work: prepare, bind, step to the end, finalize. */
static void execute(sqlite3 *s, const char *sql, const db_value *args, int nargs, outcome *o)
{
    sqlite3_stmt *st = NULL;
    int changes_before = sqlite3_total_changes(s);

    o->rows = 0;
    o->full_scan = o->vm_steps = 0;
    o->error[0] = '\0';
    o->rc = sqlite3_prepare_v2(s, sql, -1, &st, NULL);
    for (int i = 0; o->rc == SQLITE_OK && i < nargs; i++)
        o->rc = args[i].is_text ? sqlite3_bind_text(st, i + 1, args[i].s, -1, SQLITE_STATIC)
                                : sqlite3_bind_int64(st, i + 1, args[i].i);
    if (o->rc == SQLITE_OK) {
        while ((o->rc = sqlite3_step(st)) == SQLITE_ROW)
            o->rows++;
        if (o->rc == SQLITE_DONE)
            o->rc = SQLITE_OK;
        if (sqlite3_column_count(st) == 0)
            o->rows = sqlite3_total_changes(s) - changes_before;
        o->full_scan = sqlite3_stmt_status(st, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0);
        o->vm_steps = sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 0);
    }
    if (o->rc != SQLITE_OK)
        snprintf(o->error, sizeof o->error, "%s", sqlite3_errmsg(s));
    sqlite3_finalize(st);
}

/* "[42, 'ada@example.com']", at most a few values, then how many there were. */
static void format_binds(char *buf, size_t size, const db_value *args, int nargs)
{
    size_t used = 0;
    enum { SHOWN = 3 };

    buf[0] = '\0';
    for (int i = 0; i < nargs && i < SHOWN && used < size; i++) {
        const char *sep = i ? ", " : "[";
        int n = args[i].is_text
                    ? snprintf(buf + used, size - used, "%s'%.40s'", sep, args[i].s)
                    : snprintf(buf + used, size - used, "%s%lld", sep, (long long)args[i].i);
        used += n > 0 ? (size_t)n : 0;
    }
    if (nargs > SHOWN && used < size)
        used += (size_t)snprintf(buf + used, size - used, ", ... %d values", nargs);
    if (nargs > 0 && used < size)
        snprintf(buf + used, size - used, "]");
}

static int64_t run(demo_db *db, const char *name, const char *sql, const db_value *args, int nargs,
                   bool work)
{
    outcome o; /* error[] is read only if execute() set rc */

    o.rc = SQLITE_OK;
    o.rows = 0;
    o.full_scan = o.vm_steps = 0;
    db->statements++;
    /* The fast path: nobody listens (or every listener is silenced). One load, one branch. */
    if (!hark_enabled(db->sql_topic)) {
        if (work)
            execute(db->sqlite, sql, args, nargs, &o);
    } else {
        char binds[128];
        hark_handle h;
        HARK_PAYLOAD(p, 7);

        format_binds(binds, sizeof binds, args, nargs);
        hark_payload_set_str(&p, "sql", sql);
        hark_payload_set_str(&p, "name", name ? name : "SQL");
        hark_payload_set_str(&p, "binds", binds);
        /* Subscriber failures are theirs to report; the statement runs regardless. */
        (void)hark_handle_build(&h, db->sql_topic, &p); /* who takes part, decided once */
        (void)hark_handle_start(&h);                    /* clocks start */
        if (work)
            execute(db->sqlite, sql, args, nargs, &o);
        hark_payload_set_int(&p, "rows", o.rows);
        hark_payload_set_str(&p, "status", o.rc == SQLITE_OK ? "ok" : sqlite3_errstr(o.rc));
        hark_payload_set_int(&p, "full_scan", o.full_scan);
        hark_payload_set_int(&p, "vm_steps", o.vm_steps);
        if (o.rc != SQLITE_OK)
            hark_payload_set_exception(&p, "SQLiteError", o.error, NULL);
        (void)hark_handle_finish(&h); /* clocks stop, subscribers get the event */
    }
    if (o.rc != SQLITE_OK) {
        snprintf(db->last_error, sizeof db->last_error, "%s", o.error);
        return -1;
    }
    return o.rows;
}

int64_t db_run(demo_db *db, const char *name, const char *sql, const db_value *args, int nargs)
{
    return run(db, name, sql, args, nargs, true);
}

int64_t db_run_empty(demo_db *db, const char *name, const char *sql, const db_value *args,
                     int nargs)
{
    return run(db, name, sql, args, nargs, false);
}

/* One integer from a query, or -1. Used only by db_open(), before any event. */
static int64_t query_int(sqlite3 *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;

    if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

int db_open(demo_db *db, const char *path, char *err, size_t errlen)
{
    struct stat sb;
    bool memory = strcmp(path, ":memory:") == 0;
    bool existed = memory || stat(path, &sb) == 0;
    const char *slash;
    int rc;

    memset(db, 0, sizeof *db);
    if (!memory && existed && S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "cannot use \"%s\" as a database: it is a directory", path);
        return -1;
    }
    slash = strrchr(path, '/');
    if (!memory && slash && slash != path) { /* clearer than SQLite's message */
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        if (stat(dir, &sb) != 0) {
            snprintf(err, errlen, "cannot write database \"%s\": no directory \"%s\"", path, dir);
            return -1;
        }
    }
    rc = hark_topic_get(&db->sql_topic, hark_default(), "sql.sqlite");
    if (rc != 0) {
        snprintf(err, errlen, "hark: %s", hark_strerror(rc));
        return -1;
    }
    rc = sqlite3_open_v2(path, &db->sqlite, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc == SQLITE_OK && sqlite3_db_readonly(db->sqlite, "main") == 1)
        rc = SQLITE_READONLY;
    /* A database with tables that this demo did not make is somebody's data: refuse it. */
    if (rc == SQLITE_OK && !memory &&
        query_int(db->sqlite, "SELECT count(*) FROM sqlite_master") > 0 &&
        query_int(db->sqlite, "PRAGMA application_id") != DEMO_APP_ID) {
        snprintf(err, errlen,
                 "\"%s\" holds a database this demo did not create; "
                 "refusing to drop its tables",
                 path);
        sqlite3_close(db->sqlite);
        db->sqlite = NULL;
        return -1;
    }
    /* Prove the file and its directory are writable with a write that is rolled back. */
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db->sqlite, "BEGIN IMMEDIATE; CREATE TABLE demo_probe(x); ROLLBACK;",
                          NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db->sqlite, "PRAGMA application_id = 1751216747", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot write database \"%s\": %s%s", path,
                 rc == SQLITE_READONLY ? "it is read-only"
                 : db->sqlite          ? sqlite3_errmsg(db->sqlite)
                                       : sqlite3_errstr(rc),
                 (rc & 0xff) == SQLITE_CANTOPEN ? " (can its directory be written?)" : "");
        sqlite3_close(db->sqlite);
        db->sqlite = NULL;
        if (!existed) { /* leave nothing behind */
            char journal[4096];
            unlink(path);
            snprintf(journal, sizeof journal, "%s-journal", path);
            unlink(journal);
        }
        return -1;
    }
    return 0;
}

void db_close(demo_db *db)
{
    sqlite3_close(db->sqlite);
    db->sqlite = NULL;
}
