/*
 * Event identity: a process-unique id for every delivered event, and the id of
 * the event enclosing it on the same thread.
 *
 * Ids come from one global counter in blocks of ID_BLOCK, so a thread touches the
 * shared counter once per ID_BLOCK events; in between, taking an id is a load, an
 * add and a store on thread-local memory. A thread keeps copies of ids (its current
 * event, and in each handle what to restore), never pointers into handles, so an
 * event finished out of order or on another thread can leave a stale id, never a
 * dangling pointer. The one pointer, `delivering`, lives only while finish() calls
 * an event's monotonic subscribers, inside the handle's own finish.
 */
#include "internal.h"
#include "hark/sys/delivery.h"
#include "error.h"

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

void hark__nest_end(const hark_handle *h, hark_event_ids saved)
{
    struct hark__nest *n = &hark__nest;
    uint32_t level = h->level_;
    /* Beyond the kept levels, an event below the depth is taken to be there. */
    if (level < n->depth && (level >= HARK_NEST_MAX || n->chain[level] == h->ids_.id))
        hark__nest_pop(h);
    else
        n->cur = saved;
}

hark_event_ids hark_current_event_ids(void)
{
    return hark__nest.cur;
}

/* What hark_current_delivery() says when the lengths are not known: out of line,
 * so that the known case has its own stores. */
static __attribute__((noinline)) bool delivery_unknown(hark_delivery *out)
{
    out->name_len = 0;
    out->id_len = 0;
    return false;
}

static HARK__COLD bool delivery_no_out(void)
{
    hark__error(HARK_EINVAL, "hark_current_delivery: out is NULL");
    return false;
}

bool hark_current_delivery(const char *name, const char *id, hark_delivery *out)
{
    const struct hark__nest *n = &hark__nest;
    const hark_handle *h = n->delivering;
    if (HARK_UNLIKELY(!out))
        return delivery_no_out();
    out->ids = n->cur;
    /* Only the pointers finish() passed are known: a name given to hark_finish_id()
     * is not the topic's, an id given to hark_start_id() is not the handle's. */
    if (HARK_LIKELY(h && name == h->topic_->name && id == h->id_)) {
        out->name_len = (uint32_t)h->topic_->length;
        out->id_len = HARK_ID_LEN;
        return true;
    }
    return delivery_unknown(out);
}
