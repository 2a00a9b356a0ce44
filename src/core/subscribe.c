/*
 * Subscribing and unsubscribing. Every change follows one shape, so that an
 * allocation failure leaves the notifier exactly as it was:
 *   1. allocate everything (list capacity, new snapshots, exclusion strings);
 *   2. only then change the lists and publish the snapshots, which cannot fail.
 * Unsubscribed subscriptions are retired, never freed in place (epoch.h).
 */
#include "internal.h"
#include "alloc.h"
#include "grow.h"
#include "error.h"
#include "options.h"

#include <string.h>

/* Subscription ids: unique in the process, never reused (an id burnt by a failed
 * subscribe is simply skipped). */
static atomic_uint_least64_t next_sub_id = 1;

static void remove_item(hark__sub **array, size_t *count, const hark__sub *item)
{
    for (size_t i = 0; i < *count; i++) {
        if (array[i] == item) {
            memmove(&array[i], &array[i + 1], (*count - i - 1) * sizeof *array);
            (*count)--;
            return;
        }
    }
}

static bool contains(hark__sub *const *array, size_t count, const hark__sub *item)
{
    for (size_t i = 0; i < count; i++)
        if (array[i] == item)
            return true;
    return false;
}

static void free_unpublished(hark__sub *sub)
{
    hark__sub_free_pattern(sub);
    hark__free(sub);
}

/* ------------------------------------------------------------------------- */
/* Validation                                                                */
/* ------------------------------------------------------------------------- */

HARK__OPTIONS_DEFINE(hark_subscribe_options_init, hark_subscribe_options,
                     HARK_SUBSCRIBE_OPTIONS_INIT, 0, sizeof(hark_subscribe_options))

/* Why `o` cannot be subscribed, recorded; 0 when it can. */
static int validate(const hark_subscribe_options *o)
{
    const char *missing = NULL;
    switch (o->kind) {
    case HARK_KIND_TIMED:
    case HARK_KIND_MONOTONIC:
        missing = o->timed ? NULL : "timed";
        break;
    case HARK_KIND_EVENT:
        /* As Rails' EventObject#publish_event: call(event), always. */
        missing = o->event ? NULL : "event";
        if (o->publish_event)
            return hark__error(HARK_EINVAL, "hark_subscribe: publish_event is for TIMED, "
                                            "MONOTONIC and EVENTED subscriptions, not EVENT");
        break;
    case HARK_KIND_EVENTED:
        missing = !o->start ? "start" : !o->finish ? "finish" : NULL;
        break;
    default:
        return hark__error(HARK_EINVAL, "hark_subscribe: kind %d is not a hark_kind", (int)o->kind);
    }
    if (missing)
        return hark__error(HARK_EINVAL, "hark_subscribe: this kind needs the `%s` callback",
                           missing);
    if (o->silence != HARK_SILENCE_NEVER && o->silence != HARK_SILENCE_CACHED &&
        o->silence != HARK_SILENCE_DYNAMIC)
        return hark__error(HARK_EINVAL,
                           "hark_subscribe: silence mode %d is not a hark_silence_mode",
                           (int)o->silence);
    if (o->silence != HARK_SILENCE_NEVER && !o->silenced)
        return hark__error(HARK_EINVAL,
                           "hark_subscribe: a silenceable subscription needs the `silenced` "
                           "callback");
    size_t length;
    switch (o->pattern.kind) {
    case HARK_PATTERN_EXACT:
        return hark__check_name(o->pattern.text, &length);
    case HARK_PATTERN_REGEX: {
        int rc = hark__check_name(o->pattern.text, &length);
        if (rc == 0 && o->prepend)
            rc = hark__error(HARK_EPREPEND, "hark_subscribe: prepend is for exact names, not a "
                                            "regex");
        return rc;
    }
    case HARK_PATTERN_ALL:
        return o->prepend ? hark__error(HARK_EPREPEND, "hark_subscribe: prepend is for exact "
                                                       "names, not all events")
                          : 0;
    case HARK_PATTERN_MATCH:
        if (!o->pattern.match)
            return hark__error(HARK_EINVAL, "hark_subscribe: a MATCH pattern needs its function");
        return o->prepend ? hark__error(HARK_EPREPEND, "hark_subscribe: prepend is for exact "
                                                       "names, not a match function")
                          : 0;
    }
    return hark__error(HARK_EINVAL, "hark_subscribe: pattern kind %d is not a hark_pattern_kind",
                       (int)o->pattern.kind);
}

static int make_sub(hark__sub **out, const hark_subscribe_options *o)
{
    hark__sub *sub = hark__calloc(1, sizeof *sub);
    if (!sub)
        return HARK_ENOMEM;
    sub->kind = o->kind;
    sub->silence = o->silence;
    sub->pattern_kind = o->pattern.kind;
    sub->prepend = o->prepend;
    sub->want_cpu = !o->skip_cpu_time;
    sub->timed = o->timed;
    sub->event = o->event;
    sub->start = o->start;
    sub->finish = o->finish;
    sub->publish = o->publish;
    sub->publish_event = o->publish_event;
    sub->silenced = o->silenced;
    sub->release = o->release;
    sub->data = o->data;
    atomic_init(&sub->poll, 0);
    sub->match = o->pattern.match;
    sub->match_data = o->pattern.match_data;
    if (o->pattern.kind == HARK_PATTERN_EXACT || o->pattern.kind == HARK_PATTERN_REGEX) {
        sub->pattern = hark__strdup(o->pattern.text);
        if (!sub->pattern) {
            hark__free(sub);
            return HARK_ENOMEM;
        }
        int rc = hark__sub_compile(sub);
        if (rc != 0) {
            /* Nothing compiled: free the copy by hand, regfree must not run. */
            hark__free(sub->pattern);
            hark__free(sub);
            return rc;
        }
    }
    *out = sub;
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Subscribe                                                                 */
/* ------------------------------------------------------------------------- */

/* Adds an exact subscription, creating its topic if needed. Returns with the lock
 * released. */
static int add_exact(hark_notifier *n, hark__sub *sub)
{
    size_t length = strlen(sub->pattern);
    hark_topic *t;
    struct hark__name_match m;
    int rc = hark__lock_and_match(n, sub->pattern, length, &t, &m);
    if (rc != 0)
        return rc;
    bool created = false;
    if (!t) {
        rc = hark__topic_prepare(&t, n, sub->pattern, length, &m);
        created = rc == 0;
    }
    struct hark__delta delta = {.add = sub};
    struct hark__snapshot *snap = NULL;
    if (rc == 0)
        rc = HARK__GROW(t->exact, t->exact_capacity, t->exact_count + 1, 4);
    if (rc == 0)
        rc = hark__snapshot_build(&snap, t, &delta);
    if (rc != 0) {
        if (created)
            hark__topic_discard(t);
    } else {
        if (sub->prepend) {
            memmove(&t->exact[1], &t->exact[0], t->exact_count * sizeof t->exact[0]);
            t->exact[0] = sub;
        } else {
            t->exact[t->exact_count] = sub;
        }
        t->exact_count++;
        hark__snapshot_publish(t, snap);
        if (created)
            hark__topic_commit(n, t);
        /* Process-wide, so that an id of one notifier names nothing in another. */
        sub->id = atomic_fetch_add_explicit(&next_sub_id, 1, memory_order_relaxed);
        hark__subs_link_locked(n, sub);
    }
    hark__unlock(n);
    hark__name_match_free(&m);
    return rc;
}

/* A topic and the snapshot it will get, while a change is being prepared. */
struct pending {
    hark_topic *topic;
    struct hark__snapshot *snap;
};

static void discard_pending(struct pending *p, size_t count)
{
    for (size_t i = 0; i < count; i++)
        hark__snapshot_free(p[i].snap);
    hark__free(p);
}

/* Topics (created at index `from` or later) a pattern subscription may match:
 * those sharing its literal prefix. Locking: notifier lock. */
static int candidates(hark_topic ***out, size_t *count, hark_notifier *n, const hark__sub *sub,
                      size_t from)
{
    return hark__topics_with_prefix(out, count, n, from, sub->prefix, sub->prefix_length);
}

/* Keeps in list[] the topics the pattern matches. No lock held: runs regexes and
 * user match functions. A match that hits the limit fails the subscribe. */
static int filter_matching(const hark__sub *sub, hark_topic **list, size_t *count)
{
    size_t kept = 0;
    for (size_t i = 0; i < *count; i++) {
        int r = hark__pattern_match(sub, list[i]->name, list[i]->length);
        if (r < 0)
            return r;
        if (r)
            list[kept++] = list[i];
    }
    *count = kept;
    return 0;
}

/* Adds a regex, match-function or all-events subscription. The pattern is matched
 * against the existing names with the lock released; names interned meanwhile are
 * matched in further rounds until none is left. Returns with the lock released. */
/*
 * The topics `sub` matches, gathered in rounds until no name was interned meanwhile:
 * the lock is dropped around regex matching. *matched (hark__free) and *count.
 * Locking: n locked on entry, and on return unless *unlocked (relocking failed:
 * its error is returned and nothing is kept).
 */
static int collect_matching(hark_notifier *n, hark__sub *sub, hark_topic ***matched_out,
                            size_t *count_out, bool *unlocked)
{
    hark_topic **matched = NULL;
    size_t count = 0, seen = 0;
    int rc = 0;
    for (;;) {
        hark_topic **more;
        size_t more_count;
        size_t from = seen;
        seen = hark__topic_count_locked(n);
        if (from == seen)
            break;
        rc = candidates(&more, &more_count, n, sub, from);
        if (rc != 0)
            break;
        if (sub->pattern_kind != HARK_PATTERN_ALL) {
            /* A reader section around the match functions, as when a new name is
             * matched: one that tries to quiesce or free this notifier from there
             * gets HARK_EBUSY instead of freeing what this loop goes on to use. */
            unsigned section = hark__read_enter();
            hark__unlock(n);
            rc = filter_matching(sub, more, &more_count);
            hark__read_exit(section);
            int lrc = hark__lock(n);
            if (lrc != 0) {
                hark__free(more);
                hark__free(matched);
                *unlocked = true;
                return lrc;
            }
        }
        if (rc == 0 && !matched) {
            matched = more;
            count = more_count;
        } else if (rc == 0) {
            hark_topic **grown = hark__realloc(matched, (count + more_count) * sizeof *grown);
            if (grown) {
                memcpy(grown + count, more, more_count * sizeof *more);
                matched = grown;
                count += more_count;
            } else {
                rc = HARK_ENOMEM;
            }
            hark__free(more);
        } else {
            hark__free(more);
        }
        if (rc != 0)
            break;
    }
    *matched_out = matched;
    *count_out = count;
    return rc;
}

static int add_pattern(hark_notifier *n, hark__sub *sub)
{
    hark_topic **matched = NULL;
    size_t count = 0;
    int rc = hark__lock(n);
    if (rc != 0)
        return rc;
    bool unlocked = false;
    rc = collect_matching(n, sub, &matched, &count, &unlocked);
    if (unlocked)
        return rc;
    struct pending *p = NULL;
    size_t built = 0;
    if (rc == 0)
        rc = HARK__GROW(n->patterns, n->pattern_capacity, n->pattern_count + 1, 4);
    if (rc == 0 && !(p = hark__calloc(count + 1, sizeof *p)))
        rc = HARK_ENOMEM;
    struct hark__delta delta = {.add = sub};
    for (size_t i = 0; i < count && rc == 0; i++) {
        hark_topic *t = matched[i];
        rc = HARK__GROW(t->patterns, t->pattern_capacity, t->pattern_count + 1, 4);
        if (rc == 0)
            rc = hark__snapshot_build(&p[built].snap, t, &delta);
        if (rc == 0)
            p[built++].topic = t;
    }
    if (rc == 0) {
        n->patterns[n->pattern_count++] = sub;
        n->pattern_generation++;
        for (size_t i = 0; i < built; i++) {
            hark_topic *t = p[i].topic;
            t->patterns[t->pattern_count++] = sub;
            hark__snapshot_publish(t, p[i].snap);
        }
        hark__free(p);
        /* Process-wide, so that an id of one notifier names nothing in another. */
        sub->id = atomic_fetch_add_explicit(&next_sub_id, 1, memory_order_relaxed);
        hark__subs_link_locked(n, sub);
    } else if (p) {
        discard_pending(p, built);
    }
    hark__unlock(n);
    hark__free(matched);
    return rc;
}

int hark_subscribe(hark_subscription_id *out, hark_notifier *n, const hark_subscribe_options *opts)
{
    if (!n || !opts)
        return hark__error(HARK_EINVAL, "hark_subscribe: %s is NULL", !n ? "the notifier" : "opts");
    hark_subscribe_options o;
    int rc = hark__options_take(&options_type, &o, opts);
    if (rc == 0)
        rc = validate(&o);
    hark__sub *sub;
    if (rc != 0 || (rc = make_sub(&sub, &o)) != 0)
        return rc;
    rc = sub->pattern_kind == HARK_PATTERN_EXACT ? add_exact(n, sub) : add_pattern(n, sub);
    if (rc != 0) {
        free_unpublished(sub);
        return rc;
    }
    if (out)
        *out = sub->id;
    hark__epoch_poll();
    return 0;
}

static int subscribe_simple(hark_subscription_id *out, hark_notifier *n, hark_kind kind,
                            hark_pattern pattern, hark_subscribe_options *o, void *data)
{
    o->kind = kind;
    o->pattern = pattern;
    o->data = data;
    return hark_subscribe(out, n, o);
}

/* A timed_fn subscription: `kind` says which clock its times come from. */
static int subscribe_timed_fn(hark_subscription_id *out, hark_notifier *n, hark_kind kind,
                              hark_pattern pattern, hark_timed_fn fn, void *data)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.timed = fn;
    return subscribe_simple(out, n, kind, pattern, &o, data);
}

int hark_subscribe_timed(hark_subscription_id *out, hark_notifier *n, hark_pattern pattern,
                         hark_timed_fn fn, void *data)
{
    return subscribe_timed_fn(out, n, HARK_KIND_TIMED, pattern, fn, data);
}

int hark_subscribe_monotonic(hark_subscription_id *out, hark_notifier *n, hark_pattern pattern,
                             hark_timed_fn fn, void *data)
{
    return subscribe_timed_fn(out, n, HARK_KIND_MONOTONIC, pattern, fn, data);
}

int hark_subscribe_event(hark_subscription_id *out, hark_notifier *n, hark_pattern pattern,
                         hark_event_fn fn, void *data)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.event = fn;
    return subscribe_simple(out, n, HARK_KIND_EVENT, pattern, &o, data);
}

int hark_subscribe_evented(hark_subscription_id *out, hark_notifier *n, hark_pattern pattern,
                           hark_evented_fn start, hark_evented_fn finish, void *data)
{
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.start = start;
    o.finish = finish;
    return subscribe_simple(out, n, HARK_KIND_EVENTED, pattern, &o, data);
}

/* ------------------------------------------------------------------------- */
/* Unsubscribe                                                               */
/* ------------------------------------------------------------------------- */

/* Locking: notifier lock. */
static int remove_sub(hark_notifier *n, hark__sub *sub)
{
    struct hark__delta delta = {.remove = sub};
    if (sub->pattern_kind == HARK_PATTERN_EXACT) {
        hark_topic *t = hark__topic_find_locked(n, sub->pattern, strlen(sub->pattern));
        struct hark__snapshot *snap;
        int rc = hark__snapshot_build(&snap, t, &delta);
        if (rc != 0)
            return rc;
        remove_item(t->exact, &t->exact_count, sub);
        hark__snapshot_publish(t, snap);
    } else {
        /* Only topics sharing the literal prefix can hold the subscription. */
        hark_topic **list;
        size_t listed, count = 0;
        int rc = candidates(&list, &listed, n, sub, 0);
        if (rc != 0)
            return rc;
        struct pending *p = hark__calloc(listed + 1, sizeof *p);
        if (!p) {
            hark__free(list);
            return HARK_ENOMEM;
        }
        for (size_t i = 0; i < listed && rc == 0; i++) {
            hark_topic *t = list[i];
            if (!contains(t->patterns, t->pattern_count, sub))
                continue;
            rc = hark__snapshot_build(&p[count].snap, t, &delta);
            if (rc == 0)
                p[count++].topic = t;
        }
        hark__free(list);
        if (rc != 0) {
            discard_pending(p, count);
            return rc;
        }
        for (size_t i = 0; i < count; i++) {
            remove_item(p[i].topic->patterns, &p[i].topic->pattern_count, sub);
            hark__snapshot_publish(p[i].topic, p[i].snap);
        }
        hark__free(p);
        remove_item(n->patterns, &n->pattern_count, sub);
        n->pattern_generation++;
    }
    hark__subs_retire_locked(n, sub);
    return 0;
}

/* No subscription `id` on the notifier. */
static HARK__COLD int no_such(const char *call, hark_subscription_id id)
{
    (void)id; /* not shown: ids are process-wide counters, of no help to the reader */
    return hark__error(HARK_ENOENT, "%s: no such subscription on this notifier (unsubscribed?)",
                       call);
}

int hark_unsubscribe(hark_notifier *n, hark_subscription_id id)
{
    if (!n)
        return hark__error(HARK_EINVAL, "hark_unsubscribe: the notifier is NULL");
    int rc = hark__lock(n);
    if (rc != 0)
        return rc;
    hark__sub *sub = hark__find_sub_locked(n, id);
    rc = sub ? remove_sub(n, sub) : no_such("hark_unsubscribe", id);
    hark__unlock(n);
    hark__epoch_poll();
    return rc;
}

/* Locking: notifier lock. `matching`: the pattern subscriptions that match the name
 * (the topic's own list when the name is interned). */
static int unsubscribe_name_locked(hark_notifier *n, const char *name, size_t length, hark_topic *t,
                                   hark__sub *const *matching, size_t count)
{
    /* Regex and match-function subscriptions that match the name and will exclude it
     * from now on. */
    char **copies = hark__calloc(count + 1, sizeof *copies);
    if (!copies)
        return HARK_ENOMEM;
    int rc = 0;
    size_t c = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        hark__sub *s = matching[i];
        if (!hark__sub_excludable(s))
            continue;
        size_t capacity = s->exclusion_count; /* exact fit: exclusions are rare */
        copies[c] = hark__strndup(name, length);
        if (!copies[c])
            rc = HARK_ENOMEM;
        else
            rc = HARK__GROW(s->exclusions, capacity, s->exclusion_count + 1, 4);
        c++;
    }
    struct hark__snapshot *snap = NULL;
    if (rc == 0 && t) {
        struct hark__delta delta = {.drop_exact = true, .drop_regex = true};
        rc = hark__snapshot_build(&snap, t, &delta);
    }
    if (rc != 0) {
        for (size_t k = 0; k < c; k++)
            hark__free(copies[k]);
        hark__free(copies);
        return rc;
    }
    c = 0;
    for (size_t i = 0; i < count; i++) {
        hark__sub *s = matching[i];
        if (hark__sub_excludable(s))
            s->exclusions[s->exclusion_count++] = copies[c++];
    }
    hark__free(copies);
    if (!t)
        return 0;
    int removed = (int)t->exact_count;
    for (size_t i = 0; i < t->exact_count; i++)
        hark__subs_retire_locked(n, t->exact[i]);
    t->exact_count = 0;
    size_t kept = 0;
    for (size_t i = 0; i < t->pattern_count; i++)
        if (!hark__sub_excludable(t->patterns[i]))
            t->patterns[kept++] = t->patterns[i];
    t->pattern_count = kept;
    hark__snapshot_publish(t, snap);
    return removed;
}

int hark_unsubscribe_name(hark_notifier *n, const char *name)
{
    size_t length;
    if (!n)
        return hark__error(HARK_EINVAL, "hark_unsubscribe_name: the notifier is NULL");
    int rc = hark__check_name(name, &length);
    if (rc != 0)
        return rc;
    hark_topic *t;
    struct hark__name_match m;
    if ((rc = hark__lock_and_match(n, name, length, &t, &m)) != 0)
        return rc;
    if (t)
        rc = unsubscribe_name_locked(n, name, length, t, t->patterns, t->pattern_count);
    else
        rc = unsubscribe_name_locked(n, name, length, NULL, m.subs, m.count);
    hark__unlock(n);
    hark__name_match_free(&m);
    hark__epoch_poll();
    return rc;
}

int hark_subscribed_to(hark_notifier *n, hark_subscription_id id, const char *name)
{
    if (!n || !name)
        return hark__error(HARK_EINVAL, "hark_subscribed_to: %s is NULL",
                           !n ? "the notifier" : "the name");
    size_t length = strlen(name);
    int rc = hark__lock(n);
    if (rc != 0)
        return rc;
    hark__sub *sub = hark__find_sub_locked(n, id);
    if (!sub) {
        hark__unlock(n);
        return no_such("hark_subscribed_to", id);
    }
    /* Match with the lock released; the reader section keeps `sub` alive. */
    unsigned bank = hark__read_enter();
    hark__unlock(n);
    int r = hark__pattern_match(sub, name, length);
    rc = hark__lock(n);
    if (rc == 0) {
        if (r > 0 && hark__sub_excluded(sub, name))
            r = 0;
        hark__unlock(n);
    }
    hark__read_exit(bank);
    return rc != 0 ? rc : r;
}

int hark_subscribed(hark_notifier *n, const hark_subscribe_options *opts, int (*body)(void *data),
                    void *data)
{
    hark_subscription_id id;
    int rc = hark_subscribe(&id, n, opts);
    if (rc != 0)
        return rc;
    rc = body ? body(data) : 0;
    /* Removal builds new snapshots and so can fail for memory. Reclaiming what
     * earlier changes retired may free enough: try a few times before giving up. */
    int unsub = hark_unsubscribe(n, id);
    for (int attempt = 0; unsub == HARK_ENOMEM && attempt < 8; attempt++) {
        hark__epoch_poll();
        unsub = hark_unsubscribe(n, id);
    }
    return unsub == HARK_ENOMEM ? HARK_ENOMEM : rc;
}
