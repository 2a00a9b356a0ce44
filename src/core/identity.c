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

static uint64_t refill(struct hark__nest *n)
{
    uint64_t first = atomic_fetch_add_explicit(&next_block, ID_BLOCK, memory_order_relaxed);
    n->next_id = first + 1;
    n->end_id = first + ID_BLOCK;
    return first;
}

void hark__nest_push(hark_event_ids *ids)
{
    struct hark__nest *n = &hark__nest;
    if (HARK_LIKELY(n->next_id != n->end_id))
        ids->id = n->next_id++;
    else
        ids->id = refill(n);
    uint32_t depth = n->depth;
    ids->parent = depth ? n->frames[(depth < HARK_NEST_MAX ? depth : HARK_NEST_MAX) - 1].id : 0;
    if (depth < HARK_NEST_MAX)
        n->frames[depth] = *ids;
    n->depth = depth + 1;
}

bool hark__nest_enter(const hark_event_ids *ids)
{
    struct hark__nest *n = &hark__nest;
    uint32_t depth = n->depth;
    if (depth && depth <= HARK_NEST_MAX && n->frames[depth - 1].id == ids->id)
        return false;
    if (depth < HARK_NEST_MAX)
        n->frames[depth] = *ids;
    n->depth = depth + 1;
    return true;
}

void hark__nest_pop(uint64_t id)
{
    struct hark__nest *n = &hark__nest;
    uint32_t depth = n->depth;
    if (depth > HARK_NEST_MAX) {
        n->depth = depth - 1;
        return;
    }
    /* Usually the top; an event finished out of order also drops what it encloses. */
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
