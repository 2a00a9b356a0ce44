/* cost.c -- times the statement path of db.c with and without subscribers. */
#include "cost.h"

#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double cost_ns_per_statement(demo_db *db, long calls)
{
    double start = now_ns();

    for (long i = 0; i < calls; i++)
        db_run_empty(db, "User Load",
                     "SELECT id, name, email, orders_count FROM users WHERE id = ?",
                     DB_ARGS(DB_INT(i)));
    return (now_ns() - start) / (double)calls;
}
