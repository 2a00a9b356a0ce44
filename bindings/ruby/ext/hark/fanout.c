/*
 * fanout.c -- a Hark::Fanout's lifetime: its notifier, its subscription list, and
 * freeing both once neither Ruby nor an event in flight can reach them.
 */
#include "hark_ext.h"

#include <stdlib.h>

void free_rsub(rsub *s)
{
    if (s->names)
        st_free_table(s->names);
    free(s);
}

/* Frees the notifier, then what its callbacks could still reach. Returns false when
 * the notifier cannot be freed yet: an event is still in flight somewhere (on any
 * notifier and thread: reclamation is process-wide), or this thread is inside one.
 * Never waits: it runs in GC free functions, with the GVL held, and an event of
 * another thread may need the GVL to finish -- waiting for it would never end. */
static bool fanout_destroy(fanout *f)
{
    tls_registry++;
    int rc = hark_notifier_try_free(f->n);
    tls_registry--;
    if (rc != 0)
        return false;
    /* Every release callback has run: hark will not call into these any more. */
    rsub *s = f->subs;
    while (s) {
        rsub *next = s->next;
        free_rsub(s);
        s = next;
    }
    st_free_table(f->topics);
    st_free_table(f->forms);
    free(f);
    return true;
}

/* Fanouts whose notifier could not be freed yet (emptied: nothing delivers to them
 * any more, and nothing Ruby can reach uses them), oldest first; retried, without
 * waiting, when a fanout is made, subscribed to or freed. A retry stops at the first
 * that still cannot be freed: what keeps it (an event in flight) almost always keeps
 * the younger ones too, and each attempt costs system calls. */
static fanout *deferred, **deferred_tail = &deferred;

/* Frees the oldest deferred fanout if it can be freed now. */
static bool fanout_destroy_head(void)
{
    fanout *f = deferred;
    fanout *next = f->next_deferred;
    if (!fanout_destroy(f))
        return false;
    deferred = next;
    if (!deferred)
        deferred_tail = &deferred;
    return true;
}

void retry_deferred(void)
{
    while (deferred && fanout_destroy_head())
        ;
}

void fanout_unref(fanout *f)
{
    if (--f->refs > 0)
        return;
    retry_deferred();
    if (deferred || !fanout_destroy(f)) {
        f->next_deferred = NULL;
        *deferred_tail = f;
        deferred_tail = &f->next_deferred;
    }
}

static void fanout_mark(void *p)
{
    fanout *f = p;
    for (int i = 0; i < RECENT_NAMES; i++)
        if (f->recent[i].name)
            rb_gc_mark(f->recent[i].name);
    for (rsub *s = f->subs; s; s = s->next) {
        if (s->released)
            continue;
        rb_gc_mark(s->subscriber);
        rb_gc_mark(s->delegate);
        rb_gc_mark(s->pattern);
    }
}

static void fanout_free(void *p)
{
    fanout_unref(p);
}

static size_t fanout_memsize(const void *p)
{
    const fanout *f = p;
    size_t size = sizeof *f;
    for (const rsub *s = f->subs; s; s = s->next)
        size += sizeof *s;
    return size;
}

const rb_data_type_t fanout_type = {
    "Hark::Fanout", {fanout_mark, fanout_free, fanout_memsize, NULL, {0}}, 0, 0, 0};

VALUE fanout_alloc(VALUE klass)
{
    fanout *f = calloc(1, sizeof *f);
    if (!f)
        rb_raise(rb_eNoMemError, "hark: out of memory");
    retry_deferred();
    if (hark_notifier_new(&f->n) != 0) {
        free(f);
        rb_raise(rb_eNoMemError, "hark: out of memory");
    }
    f->topics = st_init_strtable();
    f->forms = st_init_numtable();
    f->subs_tail = &f->subs;
    f->refs = 1;
    hark_clock clock = {wall_clock, NULL, NULL, NULL};
    hark_notifier_set_clock(f->n, &clock);
    return TypedData_Wrap_Struct(klass, &fanout_type, f);
}

fanout *get_fanout(VALUE self)
{
    return rb_check_typeddata(self, &fanout_type);
}

void raise_hark(int rc, const char *what)
{
    if (rc == HARK_ENOMEM)
        rb_raise(rb_eNoMemError, "hark: %s: %s", what, hark_strerror(rc));
    rb_raise(rb_eArgError, "hark: %s: %s", what, hark_strerror(rc));
}

/* Drops the subscriptions hark has released. */
void sweep(fanout *f)
{
    if (f->walkers > 0)
        return;
    rsub **link = &f->subs;
    while (*link) {
        rsub *s = *link;
        if (s->released) {
            *link = s->next;
            if (s->matcher)
                f->matchers--;
            free_rsub(s);
        } else {
            link = &s->next;
        }
    }
    f->subs_tail = link;
}

VALUE fanout_topic_count(VALUE self)
{
    fanout *f = get_fanout(self);
    return SIZET2NUM(f->topics->num_entries);
}

VALUE hark_handles_built(VALUE mod)
{
    (void)mod;
    return ULL2NUM(handles_built);
}
