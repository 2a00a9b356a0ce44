/*
 * Test helpers for the Prometheus exposition formats: a skewed sample of durations,
 * a reader of the protobuf exposition (just what hark writes: delimited
 * io.prometheus.client.MetricFamily messages of histograms or counters), and histogram_quantile()
 * as Prometheus computes it on classic and on native buckets, linear interpolation within the
 * bucket that holds the rank.
 */
#ifndef HARK_TEST_PROM_DECODE_H
#define HARK_TEST_PROM_DECODE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Durations in seconds, log-normal around 2 ms plus a 2 % tail up to 2 s: skewed, as
 * latencies are. Deterministic (own generator). */
static inline void prom_skewed_sample(double *out, size_t n, uint64_t seed)
{
    uint64_t x = seed * 2862933555777941757ULL + 3037000493ULL;
    for (size_t i = 0; i < n; i++) {
        double u[2];
        for (int k = 0; k < 2; k++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            u[k] = ((double)(x >> 11) + 0.5) / 9007199254740992.0;
        }
        if (i % 50 == 49) /* the tail: log-uniform from 50 ms to 2 s */
            out[i] = 0.05 * pow(40.0, u[0]);
        else
            out[i] = 0.002 * exp(1.1 * sqrt(-2 * log(u[0])) * cos(2 * M_PI * u[1]));
    }
}

/* ------------------------------------------------------------------------- */
/* Protobuf reader                                                           */
/* ------------------------------------------------------------------------- */

struct pb_in {
    const uint8_t *p, *end;
    bool bad;
};

static inline uint64_t pb_varint(struct pb_in *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) {
            r->bad = true;
            return 0;
        }
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    r->bad = true;
    return 0;
}

/* The next field: its number, wire type and value (varint or fixed64 bits) or, for a
 * length-delimited field, its bytes in *sub. false at the end or on bad input. */
static inline bool pb_next(struct pb_in *r, unsigned *field, unsigned *wire, uint64_t *v,
                           struct pb_in *sub)
{
    *v = 0;
    *sub = (struct pb_in){r->p, r->p, false};
    if (r->bad || r->p >= r->end)
        return false;
    uint64_t tag = pb_varint(r);
    *field = (unsigned)(tag >> 3);
    *wire = (unsigned)(tag & 7);
    if (*wire == 0) {
        *v = pb_varint(r);
    } else if (*wire == 1) {
        if (r->end - r->p < 8)
            return r->bad = true, false;
        *v = 0;
        for (int i = 0; i < 8; i++)
            *v |= (uint64_t)r->p[i] << (8 * i);
        r->p += 8;
    } else if (*wire == 2) {
        uint64_t n = pb_varint(r);
        if (r->bad || n > (uint64_t)(r->end - r->p))
            return r->bad = true, false;
        *sub = (struct pb_in){r->p, r->p + n, false};
        r->p += n;
    } else {
        return r->bad = true, false;
    }
    return !r->bad;
}

static inline double pb_as_double(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static inline int64_t pb_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#define PB_MAX_BUCKETS 1200

/* Room for a label value: an event name (HARK_NAME_MAX bytes) with every byte
 * replaced by U+FFFD fits. */
#define PB_LABEL_MAX 1024

/* One Metric of the family, decoded. */
struct pb_metric {
    char labels[8][2][PB_LABEL_MAX];
    size_t label_count;
    uint64_t count;
    double sum;
    size_t classic_count;
    double upper[PB_MAX_BUCKETS];
    uint64_t cumulative[PB_MAX_BUCKETS];
    int schema;
    double zero_threshold;
    uint64_t zero_count;
    size_t native_count; /* buckets covered by the spans */
    int32_t key[PB_MAX_BUCKETS];
    int64_t native[PB_MAX_BUCKETS]; /* absolute counts, from the deltas */
    size_t span_count, delta_count;
    bool counter;         /* a Counter rather than a Histogram */
    double counter_value; /* its value */
};

struct pb_family {
    char name[128], help[256];
    uint64_t type;
    size_t metric_count;
    struct pb_metric *metrics; /* malloc'd */
};

static inline void pb_copy_string(char *dst, size_t size, struct pb_in s)
{
    size_t n = (size_t)(s.end - s.p);
    n = n < size - 1 ? n : size - 1;
    memcpy(dst, s.p, n);
    dst[n] = '\0';
}

static inline bool pb_histogram(struct pb_in r, struct pb_metric *m)
{
    unsigned f, w;
    uint64_t v;
    struct pb_in sub;
    int32_t spans[PB_MAX_BUCKETS][2];
    while (pb_next(&r, &f, &w, &v, &sub)) {
        if (f == 1 && w == 0) {
            m->count = v;
        } else if (f == 2 && w == 1) {
            m->sum = pb_as_double(v);
        } else if (f == 3 && w == 2) {
            if (m->classic_count == PB_MAX_BUCKETS)
                return false;
            unsigned bf, bw;
            uint64_t bv;
            struct pb_in bs;
            while (pb_next(&sub, &bf, &bw, &bv, &bs)) {
                if (bf == 1 && bw == 0)
                    m->cumulative[m->classic_count] = bv;
                else if (bf == 2 && bw == 1)
                    m->upper[m->classic_count] = pb_as_double(bv);
            }
            m->classic_count++;
        } else if (f == 5 && w == 0) {
            m->schema = (int)pb_unzigzag(v);
        } else if (f == 6 && w == 1) {
            m->zero_threshold = pb_as_double(v);
        } else if (f == 7 && w == 0) {
            m->zero_count = v;
        } else if (f == 12 && w == 2) {
            unsigned sf, sw;
            uint64_t sv;
            struct pb_in ss;
            spans[m->span_count][0] = spans[m->span_count][1] = 0;
            while (pb_next(&sub, &sf, &sw, &sv, &ss)) {
                if (sf == 1 && sw == 0)
                    spans[m->span_count][0] = (int32_t)pb_unzigzag(sv);
                else if (sf == 2 && sw == 0)
                    spans[m->span_count][1] = (int32_t)sv;
            }
            m->span_count++;
        } else if (f == 13 && w == 2) { /* packed sint64 */
            int64_t count = 0;
            while (sub.p < sub.end && m->delta_count < PB_MAX_BUCKETS) {
                count += pb_unzigzag(pb_varint(&sub));
                m->native[m->delta_count++] = count;
            }
        } else {
            return false; /* hark writes nothing else */
        }
    }
    /* Keys of the buckets the spans cover, in order. */
    int32_t key = 0;
    for (size_t s = 0; s < m->span_count; s++) {
        key += spans[s][0]; /* the first: where it starts; the others: the gap */
        for (int32_t i = 0; i < spans[s][1] && m->native_count < PB_MAX_BUCKETS; i++)
            m->key[m->native_count++] = key++;
    }
    return !r.bad && m->native_count == m->delta_count;
}

/* Reads one delimited MetricFamily that must fill [p, p + n). */
/* A Counter message: its value (field 1, a double). */
static inline bool pb_counter(struct pb_in r, struct pb_metric *m)
{
    unsigned f, w;
    uint64_t v;
    struct pb_in sub;
    m->counter = true;
    while (pb_next(&r, &f, &w, &v, &sub))
        if (f == 1 && w == 1)
            m->counter_value = pb_as_double(v);
    return !r.bad;
}

static inline bool pb_family_decode(struct pb_in all, struct pb_family *fam);

/* The one delimited MetricFamily of `n` bytes at `p` (nothing may follow it). */
static inline bool pb_family_read(const void *p, size_t n, struct pb_family *fam)
{
    memset(fam, 0, sizeof *fam);
    struct pb_in all = {p, (const uint8_t *)p + n, false};
    uint64_t len = pb_varint(&all);
    if (all.bad || len != (uint64_t)(all.end - all.p))
        return false;
    return pb_family_decode(all, fam);
}

/* The delimited MetricFamily at *p (before end), *p moved past it: for an exposition
 * of several families. */
static inline bool pb_family_read_next(const uint8_t **p, const uint8_t *end, struct pb_family *fam)
{
    memset(fam, 0, sizeof *fam);
    struct pb_in all = {*p, end, false};
    uint64_t len = pb_varint(&all);
    if (all.bad || len > (uint64_t)(all.end - all.p))
        return false;
    all.end = all.p + len;
    *p = all.end;
    return pb_family_decode(all, fam);
}

static inline bool pb_family_decode(struct pb_in all, struct pb_family *fam)
{
    unsigned f, w;
    uint64_t v;
    struct pb_in sub;
    while (pb_next(&all, &f, &w, &v, &sub)) {
        if (f == 1 && w == 2) {
            pb_copy_string(fam->name, sizeof fam->name, sub);
        } else if (f == 2 && w == 2) {
            pb_copy_string(fam->help, sizeof fam->help, sub);
        } else if (f == 3 && w == 0) {
            fam->type = v;
        } else if (f == 4 && w == 2) {
            fam->metrics = realloc(fam->metrics, (fam->metric_count + 1) * sizeof *fam->metrics);
            struct pb_metric *m = &fam->metrics[fam->metric_count++];
            memset(m, 0, sizeof *m);
            unsigned mf, mw;
            uint64_t mv;
            struct pb_in ms;
            while (pb_next(&sub, &mf, &mw, &mv, &ms)) {
                if (mf == 1 && mw == 2 && m->label_count < 8) {
                    unsigned lf, lw;
                    uint64_t lv;
                    struct pb_in ls;
                    while (pb_next(&ms, &lf, &lw, &lv, &ls))
                        if ((lf == 1 || lf == 2) && lw == 2)
                            pb_copy_string(m->labels[m->label_count][lf - 1], PB_LABEL_MAX, ls);
                    m->label_count++;
                } else if (mf == 7 && mw == 2) {
                    if (!pb_histogram(ms, m))
                        return false;
                } else if (mf == 3 && mw == 2) {
                    if (!pb_counter(ms, m))
                        return false;
                } else {
                    return false;
                }
            }
            if (sub.bad)
                return false;
        } else {
            return false;
        }
    }
    return !all.bad;
}

/* ------------------------------------------------------------------------- */
/* histogram_quantile()                                                      */
/* ------------------------------------------------------------------------- */

/* Linear interpolation in the bucket [lower, upper] holding `rank` of `below`+`in`. */
static inline double prom_interpolate(double lower, double upper, double rank, double below,
                                      double in)
{
    return lower + (upper - lower) * ((rank - below) / in);
}

/* On classic buckets (upper bounds and cumulative counts, +Inf implied by `count`). */
static inline double prom_classic_quantile(const double *upper, const uint64_t *cumulative,
                                           size_t n, uint64_t count, double q)
{
    double rank = q * (double)count;
    for (size_t i = 0; i < n; i++) {
        if ((double)cumulative[i] >= rank) {
            double lower = i ? upper[i - 1] : 0;
            double below = i ? (double)cumulative[i - 1] : 0;
            return prom_interpolate(lower, upper[i], rank, below, (double)cumulative[i] - below);
        }
    }
    return n ? upper[n - 1] : NAN; /* in the +Inf bucket: the highest finite bound */
}

/* On native buckets: the zero bucket [0, threshold], then (2^((k-1)/2^s), 2^(k/2^s)]. */
static inline double prom_native_quantile(const struct pb_metric *m, double q)
{
    double rank = q * (double)m->count;
    double seen = (double)m->zero_count;
    if (seen >= rank && seen > 0)
        return prom_interpolate(0, m->zero_threshold, rank, 0, seen);
    double base = pow(2, pow(2, -m->schema));
    for (size_t i = 0; i < m->native_count; i++) {
        if (!m->native[i])
            continue;
        double below = seen;
        seen += (double)m->native[i];
        if (seen >= rank)
            return prom_interpolate(pow(base, m->key[i] - 1), pow(base, m->key[i]), rank, below,
                                    (double)m->native[i]);
    }
    return NAN;
}

#endif
