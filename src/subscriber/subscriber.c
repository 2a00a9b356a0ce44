/*
 * Namespace subscribers: a handler table attached to namespaces of notifiers, one
 * event-object subscription per handler and attachment. Variants (the log
 * subscriber) extend it only through the operations table in s->ops.
 */
#include "subscriber_internal.h"
#include "alloc.h"
#include "error.h"
#include "grow.h"
#include "name.h"

#include <string.h>

const struct hark__subscriber_ops hark__plain_subscriber_ops = {
    .size = sizeof(hark_subscriber),
    .slot_size = sizeof(struct hark__slot),
};

hark_subscriber *hark__subscriber_alloc(const struct hark__subscriber_ops *ops)
{
    hark_subscriber *s = hark__calloc(1, ops->size);
    if (!s)
        return NULL;
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
        hark__free(s);
        (void)hark__error(HARK_ENOMEM, "a new subscriber: no mutex");
        return NULL;
    }
    if (pthread_mutex_init(&s->table_lock, NULL) != 0) {
        pthread_mutex_destroy(&s->lock);
        hark__free(s);
        (void)hark__error(HARK_ENOMEM, "a new subscriber: no mutex");
        return NULL;
    }
    s->ops = ops;
    atomic_init(&s->refs, 1);
    return s;
}

static void handler_free(struct hark__handler *h)
{
    hark__free(h->suffix);
    hark__free(h);
}

static void subscriber_destroy(hark_subscriber *s)
{
    for (size_t i = 0; i < s->handler_count; i++)
        handler_free(s->handlers[i]);
    hark__free(s->handlers);
    while (s->retired) {
        struct hark__handler *h = s->retired;
        s->retired = h->retired_next;
        handler_free(h);
    }
    if (s->ops->destroy)
        s->ops->destroy(s);
    pthread_mutex_destroy(&s->table_lock);
    pthread_mutex_destroy(&s->lock);
    hark__free(s);
}

void hark__subscriber_unref(hark_subscriber *s)
{
    /* acq_rel: the last reference must see every write made under the others. */
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
        subscriber_destroy(s);
}

int hark_subscriber_new(hark_subscriber **out)
{
    if (!out)
        return hark__error(HARK_EINVAL, "hark_subscriber_new: out is NULL");
    hark_subscriber *s = hark__subscriber_alloc(&hark__plain_subscriber_ops);
    if (!s)
        return HARK_ENOMEM;
    *out = s;
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Slots: one subscription each                                              */
/* ------------------------------------------------------------------------- */

static int slot_event(hark_event *ev, void *data)
{
    struct hark__slot *slot = data;
    /* Acquire: pairs with the release store that published a replaced handler. */
    struct hark__handler *h = atomic_load_explicit(&slot->handler, memory_order_acquire);
    hark_failure failure = {NULL, NULL, NULL};
    return h->fn(slot->owner, ev, &failure, h->data);
}

/*
 * The release callback of every slot: no event can reach it any more. A slot still
 * linked lost its subscription from outside (hark_unsubscribe_name, its notifier
 * freed): unlink it, so that nothing of the subscriber touches it again. Runs with
 * no hark lock held (subscriber code holds reclamation back while it locks).
 */
static void slot_release(void *data)
{
    struct hark__slot *slot = data;
    hark_subscriber *owner = slot->owner;
    pthread_mutex_lock(&owner->lock);
    if (slot->att) {
        hark__table_lock(owner);
        struct hark__slot **link = &slot->att->slots;
        while (*link && *link != slot)
            link = &(*link)->next;
        if (*link)
            *link = slot->next;
        slot->att = NULL;
        hark__table_unlock(owner);
    }
    pthread_mutex_unlock(&owner->lock);
    hark__free(slot);
    hark__subscriber_unref(owner);
}

/* The handler of a slot that could not be unsubscribed (out of memory): does nothing. */
static int disabled_fn(hark_subscriber *s, hark_event *ev, hark_failure *failure, void *data)
{
    (void)s, (void)ev, (void)failure, (void)data;
    return 0;
}

static char disabled_suffix[] = "";
static struct hark__handler disabled_handler = {disabled_suffix, disabled_fn, NULL, NULL};

/* Builds "<suffix>.<ns>" into out[HARK_NAME_MAX + 1]. */
static int full_name(char *out, const char *suffix, const char *ns)
{
    size_t a = strlen(suffix), b = strlen(ns);
    if (a + 1 + b > HARK_NAME_MAX)
        return hark__error(HARK_ENAMETOOLONG,
                           "the name \"%.24s...\" (suffix, '.', namespace: %zu bytes) is longer "
                           "than HARK_NAME_MAX (%d bytes)",
                           suffix, a + 1 + b, HARK_NAME_MAX);
    memcpy(out, suffix, a);
    out[a] = '.';
    memcpy(out + a + 1, ns, b + 1);
    return 0;
}

/*
 * Subscribes handler `h` on attachment `att` and links the new slot into it. Its
 * name is interned already (enter_interned), so no match function runs here.
 * Locking contract: s->lock held.
 */
static int slot_subscribe(hark_subscriber *s, struct hark__attachment *att, struct hark__handler *h)
{
    char name[HARK_NAME_MAX + 1];
    int rc = full_name(name, h->suffix, att->ns);
    if (rc != 0)
        return rc;
    struct hark__slot *slot = hark__calloc(1, s->ops->slot_size);
    if (!slot)
        return HARK_ENOMEM;
    slot->owner = s;
    atomic_init(&slot->handler, h);
    slot->notifier = att->notifier;

    hark_subscribe_options opts = HARK_SUBSCRIBE_OPTIONS_INIT;
    opts.kind = HARK_KIND_EVENT;
    opts.pattern = hark_exact(name);
    opts.event = s->ops->slot_event ? s->ops->slot_event : slot_event;
    opts.release = slot_release;
    opts.data = slot;
    /* Thread CPU time is a system call: read only when asked for. */
    opts.skip_cpu_time = !s->want_cpu;
    if (s->ops->slot_init_locked)
        s->ops->slot_init_locked(s, slot, &opts);
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    rc = hark_subscribe(&slot->id, att->notifier, &opts);
    if (rc != 0) {
        /* Not subscribed, so release will never run: undo by hand. */
        atomic_fetch_sub_explicit(&s->refs, 1, memory_order_relaxed);
        hark__free(slot);
        return rc;
    }
    hark__table_lock(s);
    slot->next = att->slots;
    slot->att = att;
    att->slots = slot;
    hark__table_unlock(s);
    if (s->ops->slot_added_locked)
        s->ops->slot_added_locked(s, slot);
    return 0;
}

/*
 * Unsubscribes every slot of `att` whose handler is `h` (every slot when h is
 * NULL) and unlinks them. The slots themselves are freed by their release
 * callbacks, which wait for s->lock. This cannot fail: a subscription that cannot
 * be removed for lack of memory keeps its slot, disabled (its handler never runs
 * again), until its notifier removes it (hark_notifier_free or a later change).
 * An id the notifier no longer knows (removed by name) is already gone.
 * Locking contract: s->lock held (hark__subscriber_enter), not the table lock.
 */
static void slots_unsubscribe(hark_subscriber *s, struct hark__attachment *att,
                              const struct hark__handler *h)
{
    struct hark__slot **link = &att->slots;
    while (*link) {
        struct hark__slot *slot = *link;
        if (h && atomic_load_explicit(&slot->handler, memory_order_relaxed) != h) {
            link = &slot->next;
            continue;
        }
        hark__table_lock(s);
        *link = slot->next;
        slot->att = NULL;
        hark__table_unlock(s);
        if (hark_unsubscribe(att->notifier, slot->id) == HARK_ENOMEM)
            /* Release: pairs with the acquire in slot_event(). */
            atomic_store_explicit(&slot->handler, &disabled_handler, memory_order_release);
    }
}

/* Locking contract: s->lock or the table lock held. */
static struct hark__attachment *find_attachment(const hark_subscriber *s, const hark_notifier *n,
                                                const char *ns)
{
    for (struct hark__attachment *a = s->attachments; a; a = a->next) {
        if (a->notifier == n && strcmp(a->ns, ns) == 0)
            return a;
    }
    return NULL;
}

static size_t find_handler(const hark_subscriber *s, const char *suffix)
{
    for (size_t i = 0; i < s->handler_count; i++) {
        if (strcmp(s->handlers[i]->suffix, suffix) == 0)
            return i;
    }
    return SIZE_MAX;
}

static struct hark__handler *handler_new(const char *suffix, hark_handler_fn fn, void *data)
{
    struct hark__handler *h = hark__calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->suffix = hark__strdup(suffix);
    if (!h->suffix) {
        hark__free(h);
        return NULL;
    }
    h->fn = fn;
    h->data = data;
    return h;
}

/*
 * The name the coming change subscribes to at position `i`: handler `suffix` on
 * the i-th attachment (an add), or the i-th handler on namespace `ns` of `n` (an
 * attach). Returns 1 with the name, 0 past the last one, or HARK_ENAMETOOLONG.
 * Locking contract: s->lock held.
 */
static int nth_name(const hark_subscriber *s, const char *suffix, hark_notifier *n, const char *ns,
                    size_t i, hark_notifier **on, char *name)
{
    int rc;
    if (suffix) {
        const struct hark__attachment *a = s->attachments;
        for (; a && i > 0; i--)
            a = a->next;
        if (!a)
            return 0;
        *on = a->notifier;
        rc = full_name(name, suffix, a->ns);
    } else {
        if (i >= s->handler_count)
            return 0;
        *on = n;
        rc = full_name(name, s->handlers[i]->suffix, ns);
    }
    return rc == 0 ? 1 : rc;
}

/*
 * Takes s->lock (hark__subscriber_enter) once every name the coming change will
 * subscribe to is interned in its notifier. Interning a new name runs the
 * notifier's match functions, which are promised that no hark lock is held (they
 * may call back into this subscriber): so each name is interned with the lock
 * released, and the walk starts over if the table or the attachments changed
 * meanwhile. A name that does not fit stops it before anything is interned: the
 * caller then refuses the change (HARK_ENAMETOOLONG). Returns 0 with the lock
 * held, or an error of hark_topic_get() without it.
 */
static int enter_interned(hark_subscriber *s, const char *suffix, hark_notifier *n, const char *ns)
{
    char name[HARK_NAME_MAX + 1];
    hark_notifier *on;
    hark__subscriber_enter(s);
    int rc;
    for (size_t i = 0; (rc = nth_name(s, suffix, n, ns, i, &on, name)) > 0; i++)
        ;
    if (rc < 0)
        return 0;
    for (size_t i = 0; nth_name(s, suffix, n, ns, i, &on, name) > 0;) {
        unsigned long generation = s->generation;
        hark__subscriber_leave(s);
        hark_topic *t;
        rc = hark_topic_get(&t, on, name);
        if (rc != 0)
            return rc;
        hark__subscriber_enter(s);
        i = s->generation == generation ? i + 1 : 0;
    }
    return 0;
}

/* ------------------------------------------------------------------------- */
/* The handler table                                                         */
/* ------------------------------------------------------------------------- */

/*
 * A suffix or namespace is joined as "<suffix>.<namespace>": one with a dot at
 * either end or two dots in a row would make a name with an empty part, which no
 * event is meant to have ("sql..http"). Refused with HARK_EINVAL.
 */
static bool empty_part(const char *part)
{
    size_t len = strlen(part);
    return part[0] == '.' || (len > 0 && part[len - 1] == '.') || strstr(part, "..");
}

int hark_subscriber_add(hark_subscriber *s, const char *suffix, hark_handler_fn fn, void *data)
{
    if (!s || !suffix || !fn)
        return hark__error(HARK_EINVAL, "hark_subscriber_add: %s is NULL",
                           !s        ? "the subscriber"
                           : !suffix ? "the suffix"
                                     : "the handler");
    int rc = hark__check_name(suffix, NULL);
    if (rc != 0)
        return rc;
    if (empty_part(suffix))
        return hark__error(HARK_EINVAL, "hark_subscriber_add: \"%s\" has an empty part", suffix);

    rc = enter_interned(s, suffix, NULL, NULL);
    if (rc != 0)
        return rc;
    struct hark__handler *h = handler_new(suffix, fn, data);
    if (!h) {
        hark__subscriber_leave(s);
        return HARK_ENOMEM;
    }

    size_t at = find_handler(s, suffix);
    if (at != SIZE_MAX) {
        /* Replace in place: the existing subscriptions now call the new handler. */
        struct hark__handler *old = s->handlers[at];
        s->handlers[at] = h;
        for (struct hark__attachment *a = s->attachments; a; a = a->next) {
            for (struct hark__slot *slot = a->slots; slot; slot = slot->next) {
                /* Release: pairs with the acquire in slot_event(). */
                if (atomic_load_explicit(&slot->handler, memory_order_relaxed) == old)
                    atomic_store_explicit(&slot->handler, h, memory_order_release);
            }
        }
        old->retired_next = s->retired;
        s->retired = old;
        hark__subscriber_leave(s);
        return 0;
    }

    rc = 0;
    char name[HARK_NAME_MAX + 1];
    for (struct hark__attachment *a = s->attachments; a && rc == 0; a = a->next)
        rc = full_name(name, suffix, a->ns);
    if (rc == 0)
        rc = HARK__GROW(s->handlers, s->handler_cap, s->handler_count + 1, 8);
    struct hark__attachment *a = s->attachments;
    for (; a && rc == 0; a = a->next)
        rc = slot_subscribe(s, a, h);
    if (rc != 0) {
        /* Undo the subscriptions made before the failure. */
        for (struct hark__attachment *b = s->attachments; b; b = b->next)
            slots_unsubscribe(s, b, h);
        handler_free(h);
        hark__subscriber_leave(s);
        return rc;
    }
    hark__table_lock(s);
    s->handlers[s->handler_count++] = h;
    hark__table_unlock(s);
    s->generation++;
    hark__subscriber_leave(s);
    return 0;
}

int hark_subscriber_add_table(hark_subscriber *s, const hark_handler_entry *entries, size_t count)
{
    if (!s || (!entries && count > 0))
        return hark__error(HARK_EINVAL, "hark_subscriber_add_table: %s",
                           !s ? "the subscriber is NULL" : "NULL entries with a count");
    for (size_t i = 0; i < count; i++) {
        int rc = hark_subscriber_add(s, entries[i].suffix, entries[i].fn, entries[i].data);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int hark_subscriber_remove(hark_subscriber *s, const char *suffix)
{
    if (!s || !suffix)
        return hark__error(HARK_EINVAL, "hark_subscriber_remove: %s is NULL",
                           !s ? "the subscriber" : "the suffix");
    hark__subscriber_enter(s);
    size_t at = find_handler(s, suffix);
    if (at == SIZE_MAX) {
        hark__subscriber_leave(s);
        return hark__error(HARK_ENOENT, "hark_subscriber_remove: no handler for \"%s\"", suffix);
    }
    struct hark__handler *h = s->handlers[at];
    for (struct hark__attachment *a = s->attachments; a; a = a->next)
        slots_unsubscribe(s, a, h);
    hark__table_lock(s);
    memmove(&s->handlers[at], &s->handlers[at + 1],
            (s->handler_count - at - 1) * sizeof *s->handlers);
    s->handler_count--;
    hark__table_unlock(s);
    s->generation++;
    h->retired_next = s->retired;
    s->retired = h;
    hark__subscriber_leave(s);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Attaching                                                                 */
/* ------------------------------------------------------------------------- */

int hark_subscriber_attach(hark_subscriber *s, hark_notifier *n, const char *ns)
{
    if (!s || !n || !ns)
        return hark__error(HARK_EINVAL, "hark_subscriber_attach: %s is NULL",
                           !s   ? "the subscriber"
                           : !n ? "the notifier"
                                : "the namespace");
    if (!ns[0] || empty_part(ns))
        return hark__error(HARK_EINVAL,
                           "hark_subscriber_attach: the namespace \"%s\" is empty "
                           "or has an empty part",
                           ns);
    int rc = hark__check_name(ns, NULL);
    if (rc != 0)
        return rc;

    rc = enter_interned(s, NULL, n, ns);
    if (rc != 0)
        return rc;
    if (find_attachment(s, n, ns)) {
        hark__subscriber_leave(s);
        return 0;
    }
    char name[HARK_NAME_MAX + 1];
    for (size_t i = 0; i < s->handler_count; i++) {
        rc = full_name(name, s->handlers[i]->suffix, ns);
        if (rc != 0) {
            hark__subscriber_leave(s);
            return rc;
        }
    }
    struct hark__attachment *att = hark__calloc(1, sizeof *att);
    char *copy = hark__strdup(ns);
    if (!att || !copy) {
        hark__free(att);
        hark__free(copy);
        hark__subscriber_leave(s);
        return HARK_ENOMEM;
    }
    att->notifier = n;
    att->ns = copy;
    for (size_t i = 0; i < s->handler_count; i++) {
        rc = slot_subscribe(s, att, s->handlers[i]);
        if (rc != 0) {
            slots_unsubscribe(s, att, NULL);
            hark__free(att->ns);
            hark__free(att);
            hark__subscriber_leave(s);
            return rc;
        }
    }
    hark__table_lock(s);
    att->next = s->attachments;
    s->attachments = att;
    hark__table_unlock(s);
    s->generation++;
    hark__subscriber_leave(s);
    if (s->ops->attachments_changed)
        s->ops->attachments_changed(s);
    return 0;
}

/*
 * Takes the attachment at *link off the list (the queries stop seeing it), removes
 * its subscriptions and frees it. Locking contract: s->lock held.
 */
static void attachment_remove_locked(hark_subscriber *s, struct hark__attachment **link)
{
    struct hark__attachment *att = *link;
    hark__table_lock(s);
    *link = att->next;
    hark__table_unlock(s);
    s->generation++;
    slots_unsubscribe(s, att, NULL);
    hark__free(att->ns);
    hark__free(att);
}

int hark_subscriber_detach(hark_subscriber *s, hark_notifier *n, const char *ns)
{
    if (!s || !n || !ns)
        return hark__error(HARK_EINVAL, "hark_subscriber_detach: %s is NULL",
                           !s   ? "the subscriber"
                           : !n ? "the notifier"
                                : "the namespace");
    hark__subscriber_enter(s);
    struct hark__attachment **link = &s->attachments;
    while (*link && !((*link)->notifier == n && strcmp((*link)->ns, ns) == 0))
        link = &(*link)->next;
    if (!*link) {
        hark__subscriber_leave(s);
        return hark__error(HARK_ENOENT,
                           "hark_subscriber_detach: not attached to \"%s\" of this "
                           "notifier",
                           ns);
    }
    attachment_remove_locked(s, link);
    hark__subscriber_leave(s);
    if (s->ops->attachments_changed)
        s->ops->attachments_changed(s);
    return 0;
}

int hark_subscriber_free(hark_subscriber *s)
{
    if (!s)
        return 0;
    if (s->ops->teardown)
        s->ops->teardown(s);
    hark__subscriber_enter(s);
    while (s->attachments)
        attachment_remove_locked(s, &s->attachments);
    hark__subscriber_leave(s);
    hark__subscriber_unref(s);
    return 0;
}

int hark_subscriber_new_from(hark_subscriber **out, const hark_subscriber *parent)
{
    if (!out || !parent)
        return hark__error(HARK_EINVAL, "hark_subscriber_new_from: %s is NULL",
                           !out ? "out" : "the parent");
    hark_subscriber *s = hark__subscriber_alloc(parent->ops);
    if (!s)
        return HARK_ENOMEM;
    int rc = 0;
    pthread_mutex_lock(hark__subscriber_lock(parent));
    s->want_cpu = parent->want_cpu;
    if (parent->handler_count > 0) {
        s->handlers = hark__calloc(parent->handler_count, sizeof *s->handlers);
        if (!s->handlers)
            rc = HARK_ENOMEM;
        else
            s->handler_cap = parent->handler_count;
    }
    for (size_t i = 0; rc == 0 && i < parent->handler_count; i++) {
        const struct hark__handler *p = parent->handlers[i];
        struct hark__handler *h = handler_new(p->suffix, p->fn, p->data);
        if (!h)
            rc = HARK_ENOMEM;
        else
            s->handlers[s->handler_count++] = h;
    }
    pthread_mutex_unlock(hark__subscriber_lock(parent));
    if (rc == 0 && parent->ops->copy)
        rc = parent->ops->copy(s, parent);
    if (rc != 0) {
        hark_subscriber_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int hark_subscriber_set_cpu_time(hark_subscriber *s, bool measure)
{
    if (!s)
        return hark__error(HARK_EINVAL, "hark_subscriber_set_cpu_time: the subscriber is NULL");
    hark__subscriber_enter(s);
    int rc = s->attachments ? hark__error(HARK_ESTATE, "hark_subscriber_set_cpu_time: attached "
                                                       "already (set it before attaching)")
                            : 0;
    if (rc == 0)
        s->want_cpu = measure;
    hark__subscriber_leave(s);
    return rc;
}

/* ------------------------------------------------------------------------- */
/* Queries                                                                   */
/* ------------------------------------------------------------------------- */

/* The queries take only the table lock, never the subscriber's lock: they may be
 * asked from a cached silenced() callback, under a notifier's registry lock, while
 * a change holds the subscriber's lock and waits for that registry lock. */

size_t hark_subscriber_handler_count(const hark_subscriber *s)
{
    if (!s)
        return 0;
    hark__table_lock(s);
    size_t n = s->handler_count;
    hark__table_unlock(s);
    return n;
}

size_t hark_subscriber_subscription_count(const hark_subscriber *s)
{
    if (!s)
        return 0;
    size_t n = 0;
    hark__table_lock(s);
    for (const struct hark__attachment *a = s->attachments; a; a = a->next) {
        for (const struct hark__slot *slot = a->slots; slot; slot = slot->next)
            n++;
    }
    hark__table_unlock(s);
    return n;
}

bool hark_subscriber_attached(const hark_subscriber *s, const hark_notifier *n, const char *ns)
{
    if (!s || !n || !ns)
        return false;
    hark__table_lock(s);
    bool found = find_attachment(s, n, ns);
    hark__table_unlock(s);
    return found;
}
