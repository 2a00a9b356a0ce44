/*
 * Event identity: a process-unique id for every delivered event, and the id of
 * the event enclosing it on the same thread.
 *
 * Ids come from one global counter in blocks of ID_BLOCK, so a thread touches the
 * shared counter once per ID_BLOCK events; in between, taking an id is a load, an
 * add and a store on thread-local memory. The enclosing events of a thread are
 * kept as copies (never pointers into handles), so an event finished out of order
 * or on another thread can leave a stale entry, never a dangling one.
 */
#include "internal.h"

#include <stdatomic.h>

enum { ID_BLOCK = 1024 };

static atomic_uint_least64_t next_block = 1;

HARK__TLS struct hark__nest hark__nest;

uint64_t hark__nest_refill(struct hark__nest *n)
{
    uint64_t first = atomic_fetch_add_explicit(&next_block, ID_BLOCK, memory_order_relaxed);
    n->next_id = first + 1;
    n->end_id = first + ID_BLOCK;
    return first;
}

void hark__nest_pop_slow(struct hark__nest *n, uint64_t id)
{
    uint32_t depth = n->depth;
    if (depth > HARK_NEST_MAX) {
        n->depth = depth - 1;
        return;
    }
    /* An event finished out of order also drops what it encloses. */
    while (depth-- > 0) {
        if (n->frames[depth].id == id) {
            n->depth = depth;
            return;
        }
    }
}

hark_event_ids hark_current_event_ids(void)
{
    const struct hark__nest *n = &hark__nest;
    hark_event_ids none = {0, 0};
    uint32_t depth = n->depth;
    if (!depth)
        return none;
    return n->frames[(depth < HARK_NEST_MAX ? depth : HARK_NEST_MAX) - 1];
}
