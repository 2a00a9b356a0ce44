/* workload.c -- the shop's schema, seed data and requests, all through db_run(). */
#include "workload.h"

#include "exporters.h"
#include "log_lines.h"

#include <stdio.h>
#include <string.h>

enum { USERS = 1000, ORDERS = 4000, BATCH = 500 };

static const char *const cities[] = {"Lisbon", "Oslo", "Kyoto", "Lima", "Accra", "Perth"};
#define NCITIES (sizeof cities / sizeof cities[0])

/* 0 when the statement ran, -1 when it failed. */
static int ok(int64_t rows)
{
    return rows < 0 ? -1 : 0;
}

static int migrate(demo_db *db, int arg)
{
    static const char *const schema[] = {
        "DROP TABLE IF EXISTS orders",
        "DROP TABLE IF EXISTS users",
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "email TEXT NOT NULL UNIQUE, city TEXT NOT NULL, orders_count INTEGER NOT NULL DEFAULT 0)",
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users, "
        "total INTEGER NOT NULL, status TEXT NOT NULL)",
        "CREATE INDEX orders_user_id ON orders (user_id)",
    };
    (void)arg;
    for (size_t i = 0; i < sizeof schema / sizeof schema[0]; i++)
        if (db_run(db, "Schema", schema[i], DB_NO_ARGS) < 0)
            return -1;
    return 0;
}

/* "INSERT INTO t (a, b, c) VALUES (?, ?, ?), (?, ?, ?), ..." with `rows` rows. */
static const char *multi_row_insert(char *sql, size_t size, const char *head, int rows)
{
    size_t used = (size_t)snprintf(sql, size, "%s VALUES (?, ?, ?)", head);
    for (int i = 1; i < rows && used + 12 < size; i++)
        used += (size_t)snprintf(sql + used, size - used, ", (?, ?, ?)");
    return sql;
}

/* Batched inserts in one transaction: BATCH rows per INSERT statement. */
static int seed(demo_db *db, int arg)
{
    static char sql[BATCH * 12 + 64];
    static char text[BATCH][2][32]; /* names and e-mails must live until the step */
    static db_value v[BATCH * 3];
    int failed = db_run(db, "TRANSACTION", "BEGIN", DB_NO_ARGS) < 0;
    (void)arg;

    multi_row_insert(sql, sizeof sql, "INSERT INTO users (name, email, city)", BATCH);
    for (int first = 0; !failed && first < USERS; first += BATCH) {
        for (int i = 0; i < BATCH; i++) {
            int id = first + i + 1;
            snprintf(text[i][0], sizeof text[i][0], "User %d", id);
            snprintf(text[i][1], sizeof text[i][1], "user%d@example.com", id);
            v[3 * i] = DB_TEXT(text[i][0]);
            v[3 * i + 1] = DB_TEXT(text[i][1]);
            v[3 * i + 2] = DB_TEXT(cities[id % NCITIES]);
        }
        failed = db_run(db, "User Insert All", sql, v, BATCH * 3) < 0;
    }
    multi_row_insert(sql, sizeof sql, "INSERT INTO orders (user_id, total, status)", BATCH);
    for (int first = 0; !failed && first < ORDERS; first += BATCH) {
        for (int i = 0; i < BATCH; i++) {
            int k = first + i;
            v[3 * i] = DB_INT(1 + (k * 7) % USERS);
            v[3 * i + 1] = DB_INT(100 + (k * 37) % 9900); /* cents */
            v[3 * i + 2] = DB_TEXT(k % 3 ? "shipped" : "pending");
        }
        failed = db_run(db, "Order Insert All", sql, v, BATCH * 3) < 0;
    }
    if (failed) {
        db_run(db, "TRANSACTION", "ROLLBACK", DB_NO_ARGS);
        return -1;
    }
    return ok(db_run(db, "TRANSACTION", "COMMIT", DB_NO_ARGS));
}

/* Indexed reads: the primary key, then the orders_user_id index. */
static int show_user(demo_db *db, int user)
{
    if (db_run(db, "User Load", "SELECT id, name, email, orders_count FROM users WHERE id = ?",
               DB_ARGS(DB_INT(user))) < 0)
        return -1;
    return ok(
        db_run(db, "Order Load",
               "SELECT id, total, status FROM orders WHERE user_id = ? ORDER BY id DESC LIMIT 5",
               DB_ARGS(DB_INT(user))));
}

/* Unindexed reads: neither city nor total has an index, so SQLite scans the tables. */
static int search(demo_db *db, int user)
{
    if (db_run(db, "User Count", "SELECT count(*) FROM users WHERE city = ?",
               DB_ARGS(DB_TEXT(cities[user % NCITIES]))) < 0)
        return -1;
    return ok(db_run(db, "Order Stats", "SELECT count(*), sum(total) FROM orders WHERE total > ?",
                     DB_ARGS(DB_INT(9000))));
}

/* A transaction: a new order and the user's counter move together. */
static int checkout(demo_db *db, int user)
{
    int failed =
        db_run(db, "TRANSACTION", "BEGIN", DB_NO_ARGS) < 0 ||
        db_run(db, "Order Create",
               "INSERT INTO orders (user_id, total, status) VALUES (?, ?, 'pending')",
               DB_ARGS(DB_INT(user), DB_INT(4200))) < 0 ||
        db_run(db, "User Update", "UPDATE users SET orders_count = orders_count + 1 WHERE id = ?",
               DB_ARGS(DB_INT(user))) < 0;

    db_run(db, "TRANSACTION", failed ? "ROLLBACK" : "COMMIT", DB_NO_ARGS);
    return failed ? -1 : 0;
}

static int ship(demo_db *db, int user)
{
    return ok(
        db_run(db, "Order Update",
               "UPDATE orders SET status = 'shipped' WHERE user_id = ? AND status = 'pending'",
               DB_ARGS(DB_INT(user))));
}

/* Fails on purpose: user1@example.com is taken, and email is UNIQUE. */
static int signup(demo_db *db, int user)
{
    int failed;
    (void)user;

    db_run(db, "TRANSACTION", "BEGIN", DB_NO_ARGS);
    failed = db_run(db, "User Create", "INSERT INTO users (name, email, city) VALUES (?, ?, ?)",
                    DB_ARGS(DB_TEXT("Ada"), DB_TEXT("user1@example.com"), DB_TEXT("Oslo"))) < 0;
    db_run(db, "TRANSACTION", failed ? "ROLLBACK" : "COMMIT", DB_NO_ARGS);
    return failed ? -1 : 0;
}

/* One unit of work of the program: a `request.demo` event around a handler. */
static int request(demo_db *db, const char *kind, int number, int (*handler)(demo_db *, int),
                   int arg)
{
    HARK_TOPIC_STATIC(request_topic, "request.demo"); /* interned at the first call only */
    HARK_PAYLOAD(p, 3);
    uint64_t before = db->statements;
    int rc = 0;

    /* As Rails does in development: a blank line between requests at DEBUG. */
    HARK_LOG(log_lines_logger(), HARK_LOG_DEBUG, "%s", "");
    HARK_LOG(log_lines_logger(), HARK_LOG_INFO, "Started %s #%d", kind, number);
    HARK_INSTRUMENT(request_topic, &p, {
        hark_payload_set_str(&p, "request", kind);
        hark_payload_set_int(&p, "number", number);
        rc = handler(db, arg);
        hark_payload_set_int(&p, "statements", (int64_t)(db->statements - before));
        if (rc != 0)
            hark_payload_set_exception(&p, "RequestError", db->last_error, NULL);
    });
    exporters_otlp_flush(); /* --otlp: the request's trace goes out now */
    return rc;
}

int workload_run(demo_db *db, int requests)
{
    static const struct {
        const char *kind;
        int (*handler)(demo_db *, int);
    } kinds[] = {
        {"show_user", show_user}, {"search", search}, {"checkout", checkout}, {"ship", ship}};
    int number = 0;

    if (request(db, "migrate", ++number, migrate, 0) || request(db, "seed", ++number, seed, 0))
        return -1;
    for (int i = 0; i < requests; i++) {
        int k = i % 4, user = 1 + (i * 37) % USERS;
        if (request(db, kinds[k].kind, ++number, kinds[k].handler, user))
            return -1;
    }
    /* The planned failure: the request must fail, and only because of the duplicate. */
    if (request(db, "signup", ++number, signup, 0) == 0 || !strstr(db->last_error, "UNIQUE"))
        return -1;
    return 0;
}
