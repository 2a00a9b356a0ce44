/*
 * Prometheus text exposition format 0.0.4: one histogram family, one series per
 * event name, written in pieces to any sink.
 */
#include "prom_internal.h"
#include "alloc.h"
#include "error.h"
#include "escape.h"
#include "number.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_METRIC HARK__PROM_DEFAULT_METRIC
#define DEFAULT_HELP HARK__PROM_DEFAULT_HELP

/* A buffered writer in front of the sink; the first failure sticks. */
struct out {
    hark_metrics_prom_sink sink;
    void *data;
    int rc;
    hark__buf b;
};

/* Bytes gathered before they go to the sink (at the end of a line). */
#define OUT_CHUNK 4096

static void flush(struct out *o)
{
    if (o->rc == 0 && o->b.over)
        o->rc = hark__error(HARK_ENOMEM, "the Prometheus exposition: out of memory");
    if (o->rc == 0 && o->b.len && o->sink(hark__buf_text(&o->b), o->b.len, o->data) != 0)
        o->rc = hark__error(HARK_EIO, "the Prometheus exposition: the sink returned failure; "
                                      "output stops there");
    o->b.len = 0;
}

static void put(struct out *o, const char *s, size_t n)
{
    hark__buf_put(&o->b, s, n);
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

/* The end of a line: the sink gets the lines gathered by now in chunks. */
static void end_line(struct out *o)
{
    hark__buf_putc(&o->b, '\n');
    if (o->b.len >= OUT_CHUNK)
        flush(o);
}

/* A float as Go's ParseFloat reads it, in the fewest digits that round-trip. */
static void put_double(struct out *o, double v)
{
    hark__buf_double(&o->b, v, HARK__DOUBLE_TEXT);
}

static void put_u64(struct out *o, uint64_t v)
{
    hark__buf_u64(&o->b, v);
}

/*
 * Escaped text: backslash and newline (and in a label value, the double quote);
 * invalid UTF-8 becomes U+FFFD, since Prometheus refuses the whole scrape otherwise.
 */
static void put_escaped(struct out *o, const char *s, bool quote)
{
    (void)hark__escape(&o->b, s, strlen(s), quote ? HARK__ESC_PROM_LABEL : HARK__ESC_PROM_HELP,
                       HARK__ESC_NO_LIMIT);
}

static void put_label_value(struct out *o, const char *s)
{
    put_escaped(o, s, true);
}

static void put_label_value_n(struct out *o, const char *s, size_t n)
{
    (void)hark__escape(&o->b, s, n, HARK__ESC_PROM_LABEL, HARK__ESC_NO_LIMIT);
}

static void put_help(struct out *o, const char *s)
{
    put_escaped(o, s, false);
}

/* The labels of one series, without the closing brace: {event="x",k="v": the
 * event name, the series' own labels (hark_metrics_record_labelled()), the options'. */
static void put_labels(struct out *o, const hark_metrics_prom_options *opts, const char *event)
{
    size_t at = hark__metrics_series_event(event);
    puts_(o, "{event=\"");
    put_label_value_n(o, event, at);
    puts_(o, "\"");
    hark__metrics_label l;
    while (hark__metrics_series_label(event, &at, &l)) {
        puts_(o, ",");
        put(o, l.name, l.name_len);
        puts_(o, "=\"");
        put_label_value_n(o, l.value, l.value_len);
        puts_(o, "\"");
    }
    for (size_t i = 0; i < opts->label_count; i++) {
        puts_(o, ",");
        puts_(o, opts->labels[2 * i]);
        puts_(o, "=\"");
        put_label_value(o, opts->labels[2 * i + 1]);
        puts_(o, "\"");
    }
}

/* The start of one sample line, up to its labels' closing brace:
 * <metric><suffix>{event="x",k="v" */
static void put_series(struct out *o, const char *metric, const char *suffix,
                       const hark_metrics_prom_options *opts, const char *event)
{
    puts_(o, metric);
    puts_(o, suffix);
    put_labels(o, opts, event);
}

/* The `le` text of each histogram edge, formatted once per exposition: every series
 * shares the edges of its ladder, and the shortest round-trip text of a double costs
 * more than the rest of its line (a shared directory's scrape writes thousands). */
struct le_texts {
    uint8_t len[HARK_METRICS_BUCKETS]; /* 0: not formatted yet */
    char text[HARK_METRICS_BUCKETS][HARK__DOUBLE_TEXT_MAX];
};

static void put_le(struct out *o, struct le_texts *le, size_t edge)
{
    if (!le->len[edge])
        le->len[edge] = (uint8_t)hark__fmt_double(le->text[edge], hark_metrics_bucket_lower(edge),
                                                  HARK__DOUBLE_TEXT);
    put(o, le->text[edge], le->len[edge]);
}

/* The counter family: `# HELP`, `# TYPE ... counter` and one sample per counter series,
 * its number of events. */
static void put_counters(struct out *o, const hark_metrics_prom_options *opts,
                         const hark_metrics_snapshot *snap)
{
    const char *counter = hark__prom_counter_name(opts);
    puts_(o, "# HELP ");
    puts_(o, counter);
    puts_(o, " ");
    put_help(o, opts->counter_help ? opts->counter_help : HARK__PROM_DEFAULT_COUNTER_HELP);
    puts_(o, "\n# TYPE ");
    puts_(o, counter);
    puts_(o, " counter");
    end_line(o);
    for (size_t i = 0; i < snap->count && o->rc == 0; i++) {
        const hark_metrics_series *s = &snap->series[i];
        if (!hark__prom_is_counter(opts, s->name))
            continue;
        put_series(o, counter, "", opts, s->name);
        puts_(o, "} ");
        put_u64(o, s->count);
        end_line(o);
    }
}

static int sink_file(const char *text, size_t length, void *data)
{
    return fwrite(text, 1, length, data) == length ? 0 : -1;
}

int hark_metrics_write_prometheus(hark_metrics *m, const hark_metrics_prom_options *opts,
                                  hark_metrics_prom_sink sink, void *data)
{
    if (!m || !sink)
        return hark__error(HARK_EINVAL, "hark_metrics_write_prometheus: %s is NULL",
                           !m ? "the metrics object" : "the sink");
    hark_metrics_prom_options loaded;
    int rc = hark__prom_options_load(&loaded, opts);
    if (rc != 0)
        return rc;
    opts = &loaded;
    size_t *idx = hark__malloc(HARK__PROM_LADDER_MAX * sizeof *idx);
    struct out *o = hark__malloc(sizeof *o);
    struct le_texts *le = hark__malloc(sizeof *le);
    hark_metrics_snapshot *snap = NULL;
    if (!idx || !o || !le || (rc = hark_metrics_snapshot_take(&snap, m)) != 0) {
        hark__free(idx);
        hark__free(o);
        hark__free(le);
        return rc ? rc : HARK_ENOMEM;
    }
    memset(le->len, 0, sizeof le->len);
    *o = (struct out){.sink = sink, .data = data};
    const char *metric = opts->metric ? opts->metric : DEFAULT_METRIC;
    puts_(o, "# HELP ");
    puts_(o, metric);
    puts_(o, " ");
    put_help(o, opts->help ? opts->help : DEFAULT_HELP);
    puts_(o, "\n# TYPE ");
    puts_(o, metric);
    puts_(o, " histogram");
    end_line(o);
    for (size_t i = 0; i < snap->count && o->rc == 0; i++) {
        const hark_metrics_series *s = &snap->series[i];
        if (hark__prom_is_counter(opts, s->name))
            continue;
        size_t nedges = hark__prom_ladder(opts, s->name, idx);
        uint64_t cumulative = 0;
        size_t b = 0;
        for (size_t k = 0; k < nedges; k++) {
            /* Everything in buckets below the edge is at most the bound. */
            for (; b < idx[k]; b++)
                cumulative += s->buckets[b];
            put_series(o, metric, "_bucket", opts, s->name);
            puts_(o, ",le=\"");
            put_le(o, le, idx[k]);
            puts_(o, "\"} ");
            put_u64(o, cumulative);
            end_line(o);
        }
        put_series(o, metric, "_bucket", opts, s->name);
        puts_(o, ",le=\"+Inf\"} ");
        put_u64(o, s->count);
        end_line(o);
        put_series(o, metric, "_sum", opts, s->name);
        puts_(o, "} ");
        put_double(o, s->sum);
        end_line(o);
        put_series(o, metric, "_count", opts, s->name);
        puts_(o, "} ");
        put_u64(o, s->count);
        end_line(o);
    }
    if (opts->counter_event_count)
        put_counters(o, opts, snap);
    flush(o);
    rc = o->rc;
    hark__buf_free(&o->b);
    hark__free(o);
    hark__free(le);
    hark__free(idx);
    hark_metrics_snapshot_free(snap);
    return rc;
}

int hark_metrics_write_prometheus_file(hark_metrics *m, const hark_metrics_prom_options *opts,
                                       FILE *out)
{
    if (!out)
        return hark__error(HARK_EINVAL, "hark_metrics_write_prometheus_file: the stream is NULL");
    int rc = hark_metrics_write_prometheus(m, opts, sink_file, out);
    if (rc == HARK_EIO)
        rc = hark__error(HARK_EIO,
                         "hark_metrics_write_prometheus_file: the stream cannot be "
                         "written: %s",
                         strerror(errno));
    else if (rc == 0 && fflush(out) != 0)
        rc = hark__error(HARK_EIO,
                         "hark_metrics_write_prometheus_file: the stream cannot be "
                         "flushed: %s",
                         strerror(errno));
    return rc;
}
