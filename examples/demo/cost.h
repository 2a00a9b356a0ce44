/* cost.h -- measures what hark adds to one statement of the demo. */
#ifndef DEMO_COST_H
#define DEMO_COST_H

#include "db.h"

/*
 * Nanoseconds per call of the demo's statement path with SQLite's work left out
 * (db_run_empty(): the hark guard, payload, handle and whatever subscribers are
 * attached right now), timed over `calls` calls.
 */
double cost_ns_per_statement(demo_db *db, long calls);

#endif /* DEMO_COST_H */
