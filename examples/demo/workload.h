/*
 * workload.h -- what the demo does with its database: a small shop.
 *
 * One run: a "migrate" request (drop and create the schema), a "seed" request (batched
 * multi-row inserts inside one transaction), `requests` requests cycling through
 * show_user (indexed reads), search (unindexed reads: full table scans), checkout
 * (a transaction with an insert and an update) and ship (an indexed update), and
 * finally a signup whose INSERT fails on purpose (a duplicate e-mail address).
 * Each request is a `request.demo` event; its statements nest inside it.
 */
#ifndef DEMO_WORKLOAD_H
#define DEMO_WORKLOAD_H

#include "db.h"

/* Runs the workload once. Returns 0, or -1 if anything but the planned failure failed. */
int workload_run(demo_db *db, int requests);

#endif /* DEMO_WORKLOAD_H */
