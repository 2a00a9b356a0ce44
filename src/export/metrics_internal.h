/* Internal to the export layer: what the metrics files share. */
#ifndef HARK_METRICS_INTERNAL_H
#define HARK_METRICS_INTERNAL_H

#include "hark/metrics.h"

#include "slot.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Bucket of a duration in nanoseconds: exact below 16 ns, then 16 per power of two. */
static inline size_t hark__metrics_bucket(uint64_t ns)
{
    if (ns < 16)
        return (size_t)ns;
    if (ns >= HARK_METRICS_MAX_NS)
        return HARK_METRICS_BUCKETS - 1;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns);
    return (size_t)(e - 3) * 16 + (size_t)((ns >> (e - 4)) & 15);
}

/* Lower edge, in nanoseconds, of bucket i (i < HARK_METRICS_BUCKETS - 1). */
static inline uint64_t hark__metrics_lower_ns(size_t i)
{
    if (i < 16)
        return i;
    unsigned e = (unsigned)(i / 16) + 3;
    return (uint64_t)(16 + i % 16) << (e - 4);
}

/* Rounds a bound in seconds down to the nearest bucket edge (an edge itself stays);
 * returns the index of the bucket that edge starts. */
size_t hark__metrics_edge_index(double seconds);

/* The counters of one series, which only the owner of its shard writes: each one a
 * 64-bit aligned word stored whole, so that a reader -- another thread, or another
 * process through a metrics file (metrics_file.h) -- never sees half of one. */
struct counters {
    atomic_uint_least64_t sum_ns, min_ns, max_ns;
    atomic_uint_least64_t buckets[HARK_METRICS_BUCKETS];
};

/* The series of one event name in one shard; immutable once published but for its
 * counters, and for `c` after a fork (moved by the owner, see metrics_file.h). */
struct series {
    char *name;
    /* Where the counters are: `own`, or in shared mode this series' record in the
     * process's metrics file. */
    struct counters *c;
    struct series *next; /* immutable once published */
    struct counters own; /* last: a series of shared metrics is allocated without it */
};

struct slot {
    const char *key;
    struct series *series;
};

struct shard {
    hark__slot slot;                 /* first: the thread hand-off (slot.h) */
    struct shard *next;              /* metrics' list; guarded by its lock */
    _Atomic(struct series *) series; /* newest first; the owner publishes */
    /* The owner's lookup table, name pointer -> series; owner only. */
    struct slot *slots;
    size_t mask, used;
    size_t series_count; /* owner only */
    /* Shared mode: the fork generation (metrics_file.h) whose file holds the counters
     * of this shard's series; owner only. */
    unsigned long generation;
};

/* The data of one subscription: what its callbacks need. */
struct token {
    hark_metrics *m;
    struct attachment *a; /* NULL once the subscription is not the attachment's own */
    /* Set when the subscription is being ended: it records nothing more, even if
     * ending it fails for memory and it stays in its notifier until that removes it. */
    atomic_bool off;
};

/* One hark_metrics_attach(): re-subscribed when the metrics resume from silence. */
struct attachment {
    hark_notifier *n;
    hark_pattern_kind kind;
    char *text;              /* the pattern text, copied; NULL for all events */
    hark_subscription_id id; /* the live subscription, 0 while silenced */
    hark_attach_id aid;      /* its name for the user (hark/exporter.h) */
    struct token *token;     /* its data, NULL while silenced */
    struct attachment *next;
};

struct hark_metrics {
    uint64_t serial;
    pthread_mutex_t lock;        /* guards shards (the list) and attachments */
    pthread_mutex_t attach_lock; /* serialises attach, silence and free; taken first */
    struct shard *shards;
    struct attachment *attachments;
    atomic_int refs; /* 1 for the owner + 1 per live subscription */
    bool silenced;   /* guarded by attach_lock */
    atomic_int servers;
    /* Shared mode: the directory and this process's file in it; NULL when the series
     * live in this process only. */
    struct hark__metrics_dir *dir;
};

/* The length of the event name a series' name starts with (a labelled series,
 * hark_metrics_record_labelled(), goes on with its labels). */
static inline size_t hark__metrics_series_event(const char *series)
{
    const char *sep = strchr(series, HARK_METRICS_LABEL_SEP);
    return sep ? (size_t)(sep - series) : strlen(series);
}

/* One label of a labelled series' name. */
typedef struct hark__metrics_label {
    const char *name, *value;
    size_t name_len, value_len;
} hark__metrics_label;

/* The label at *at (start at hark__metrics_series_event()'s end) into *out, *at
 * moved past it; false when there is none left. */
static inline bool hark__metrics_series_label(const char *series, size_t *at,
                                              hark__metrics_label *out)
{
    const char *p = series + *at;
    if (*p != HARK_METRICS_LABEL_SEP)
        return false;
    out->name = ++p;
    const char *eq = strchr(p, '=');
    const char *end = strchr(p, HARK_METRICS_LABEL_SEP);
    if (!end)
        end = p + strlen(p);
    if (!eq || eq > end) /* cut inside the name (never written so): an empty value */
        eq = end;
    out->name_len = (size_t)(eq - p);
    out->value = eq < end ? eq + 1 : end;
    out->value_len = (size_t)(end - out->value);
    *at = (size_t)(end - series);
    return true;
}

/* Servers currently serving `m` (hark_metrics_free refuses while nonzero). */
void hark__metrics_server_ref(hark_metrics *m, int delta);

#endif
