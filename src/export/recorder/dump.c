/*
 * The flight recorder (hark/recorder.h): writing a dump. The records of each chunk,
 * copied out by snapshot.c, are formatted into a staging buffer that is written
 * with write(2) whenever it holds OUT_FLUSH bytes: each payload excerpt rendered
 * from its copy by the one payload rendering (excerpt.c), Chrome trace events by
 * the trace file's own writer (chrome_event.h). Nothing here allocates, locks or
 * calls stdio or snprintf() once the dump's memory is taken (hark__rec_dump_init),
 * so that the crash handler (crash.c) runs the very same code.
 */
#include "recorder_internal.h"
#include "hark/clock.h"
#include "chrome_event.h"
#include "json.h"
#include "number.h"
#include "alloc.h"
#include "fdio.h"
#include "ns.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OUT_FLUSH (64u * 1024u)

/* The longest line one record makes: a Chrome event or a JSON line (whose name is
 * escaped once, plus the transaction id and the other keys). */
static size_t line_max(const hark_recorder *r)
{
    return HARK__CHROME_EVENT_MAX + r->payload_bytes + 256;
}

int hark__rec_dump_init(struct rdump *d, hark_recorder *r)
{
    memset(d, 0, sizeof *d);
    d->rec = r;
    d->fd = -1;
    d->reason = "dump";
    d->out_cap = OUT_FLUSH + line_max(r);
    d->copy = hark__malloc(r->chunk_bytes);
    d->args = hark__malloc(r->payload_bytes);
    d->scratch = hark__malloc(HARK__REC_EXCERPT_SCRATCH(r->payload_bytes));
    d->entries = hark__malloc((size_t)r->nchunks * sizeof *d->entries);
    d->out = hark__malloc(d->out_cap);
    if (!d->copy || !d->args || !d->scratch || !d->entries || !d->out) {
        hark__rec_dump_fini(d);
        return HARK_ENOMEM;
    }
    return 0;
}

void hark__rec_dump_fini(struct rdump *d)
{
    hark__free(d->copy);
    hark__free(d->args);
    hark__free(d->scratch);
    hark__free(d->entries);
    hark__free(d->out);
    d->copy = d->out = d->args = d->scratch = NULL;
    d->entries = NULL;
}

/* Writes the staging buffer out; after a failure, nothing more is written. */
static void flush_out(struct rdump *d)
{
    if (!d->err && hark__write_full(d->fd, d->out, d->out_len) != 0)
        d->err = errno ? errno : EIO;
    d->out_len = 0;
}

/* Members whose values are unsigned numbers, each key a literal with its comma and
 * colon. */
typedef struct num {
    const char *key;
    uint64_t value;
} num;

static void nums(hark__buf *b, const num *n, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        hark__buf_puts(b, n[i].key);
        hark__buf_u64(b, n[i].value);
    }
}

static void chrome_record(struct rdump *d, hark__buf *w, const struct rentry *e,
                          const struct rrec *h, const char *name, const char *args, size_t args_len)
{
    if (d->events)
        HARK__BUF_LIT(w, ",\n");
    hark__chrome_event ce = {name,
                             h->ev.name_len,
                             hark__s_to_ns(h->start_s),
                             hark__s_to_ns(h->end_s),
                             d->pid,
                             e->tid,
                             h->ev.ids.id,
                             h->ev.ids.parent,
                             args,
                             args_len};
    hark__chrome_event_write(w, &ce);
}

static void jsonl_record(struct rdump *d, hark__buf *w, const struct rentry *e,
                         const struct rrec *h, const char *txn, const char *name, const char *args,
                         size_t args_len)
{
    HARK__BUF_LIT(w, "{\"name\":");
    hark__json_str(w, name, h->ev.name_len);
    num members[] = {{",\"start_ns\":", (uint64_t)hark__s_to_ns(h->start_s)},
                     {",\"end_ns\":", (uint64_t)hark__s_to_ns(h->end_s)},
                     {",\"pid\":", (uint64_t)d->pid},
                     {",\"tid\":", (uint64_t)e->tid},
                     {",\"id\":", h->ev.ids.id},
                     {",\"parent_id\":", h->ev.ids.parent}};
    nums(w, members, sizeof members / sizeof members[0]);
    HARK__BUF_LIT(w, ",\"transaction_id\":");
    if (h->ev.id_len)
        hark__json_str(w, txn, h->ev.id_len);
    else
        HARK__BUF_LIT(w, "null");
    if (h->flags & RREC_FAILED)
        HARK__BUF_LIT(w, ",\"failed\":true,\"payload\":{");
    else
        HARK__BUF_LIT(w, ",\"failed\":false,\"payload\":{");
    hark__buf_put(w, args, args_len);
    HARK__BUF_LIT(w, "}}\n");
}

/* Formats the records of one copied chunk. A record whose header does not add up is
 * the end of what can be read (it cannot happen: only published records are
 * copied). */
static void format_chunk(struct rdump *d, const struct rentry *e, uint32_t used)
{
    for (uint32_t off = 0; off + sizeof(struct rrec) <= used;) {
        struct rrec h;
        memcpy(&h, d->copy + off, sizeof h);
        size_t body = sizeof h + (size_t)h.ev.id_len + h.ev.name_len + h.args_len;
        if (h.size < sizeof h || (h.size & 7) || h.size > used - off || body > h.size)
            return;
        const char *txn = d->copy + off + sizeof h;
        const char *name = txn + h.ev.id_len;
        size_t args_len = hark__rec_excerpt_render(d->args, d->rec->payload_bytes,
                                                   name + h.ev.name_len, h.args_len, d->scratch);
        hark__buf w = hark__buf_fixed(d->out, d->out_cap);
        w.len = d->out_len;
        if (d->format == HARK_RECORDER_CHROME)
            chrome_record(d, &w, e, &h, name, d->args, args_len);
        else
            jsonl_record(d, &w, e, &h, txn, name, d->args, args_len);
        /* The buffer keeps room for the longest line: a record always fits. */
        d->out_len = w.len;
        d->events++;
        if (d->out_len >= OUT_FLUSH)
            flush_out(d);
        off += h.size;
    }
}

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * ,"wall_offset_ns":"N": what turns the records' monotonic times into Unix time, as
 * a string (past a double's precision), as the trace file writes it. The wall
 * anchor (hark/clock.h), the one conversion every hark output uses; in a signal
 * handler, where the anchor's calibration may not run, the kernel's offset now.
 */
static void wall_offset(const struct rdump *d, hark__buf *w)
{
    int64_t mono = clock_ns(CLOCK_MONOTONIC);
    int64_t off =
        d->spin_limited ? clock_ns(CLOCK_REALTIME) - mono : hark_clock_wall_offset_ns(mono);
    HARK__BUF_LIT(w, ",\"wall_offset_ns\":\"");
    hark__buf_i64(w, off);
    hark__buf_putc(w, '"');
}

/* The summary object every dump ends with (hark/recorder.h). */
static void summary(struct rdump *d, hark__buf *w)
{
    hark_recorder *r = d->rec;
    uint64_t recorded = 0, dropped = 0, dump_dropped = 0;
    hark__rec_counts(r, &recorded, &dropped, &dump_dropped);
    num members[] = {
        {"{\"pid\":", (uint64_t)d->pid},
        {",\"events\":", d->events},
        {",\"recorded\":", recorded},
        {",\"overwritten\":", atomic_load_explicit(&r->overwritten, memory_order_seq_cst)},
        {",\"dropped\":", dropped},
        {",\"dump_dropped\":", dump_dropped},
        {",\"threads\":", d->threads}};
    nums(w, members, sizeof members / sizeof members[0]);
    wall_offset(d, w);
    HARK__BUF_LIT(w, ",\"reason\":");
    hark__json_cstr(w, d->reason);
    if (d->signo) {
        HARK__BUF_LIT(w, ",\"signal\":");
        hark__buf_i64(w, d->signo);
    }
    hark__buf_putc(w, '}');
}

int hark__rec_dump_write(struct rdump *d)
{
    d->pid = (long)getpid();
    d->events = 0;
    d->out_len = 0;
    d->err = 0;
    if (d->format == HARK_RECORDER_CHROME) {
        static const char head[] = "{\"traceEvents\":[\n";
        memcpy(d->out, head, sizeof head - 1);
        d->out_len = sizeof head - 1;
    }
    uint32_t n = hark__rec_snapshot(d);
    d->threads = hark__rec_entry_threads(d->entries, n);
    /* Each chunk is unpinned once copied; after a failed write, the rest at once. */
    for (uint32_t i = 0; i < n; i++) {
        if (!d->err) {
            uint32_t used = hark__rec_copy_chunk(d, &d->entries[i]);
            hark__rec_unpin(d, &d->entries[i]);
            format_chunk(d, &d->entries[i], used);
        } else {
            hark__rec_unpin(d, &d->entries[i]);
        }
    }
    hark__buf w = hark__buf_fixed(d->out, d->out_cap);
    w.len = d->out_len;
    if (d->format == HARK_RECORDER_CHROME) {
        HARK__BUF_LIT(&w, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"hark\"");
        wall_offset(d, &w); /* where the trace file has it, too */
        HARK__BUF_LIT(&w, ",\"recorder\":");
        summary(d, &w);
        HARK__BUF_LIT(&w, "}}\n");
    } else {
        HARK__BUF_LIT(&w, "{\"recorder\":");
        summary(d, &w);
        HARK__BUF_LIT(&w, "}\n");
    }
    d->out_len = w.len;
    flush_out(d);
    if (d->err) {
        atomic_fetch_add_explicit(&d->rec->dump_errors, 1, memory_order_relaxed);
        errno = d->err;
        return HARK_EIO;
    }
    atomic_fetch_add_explicit(&d->rec->dumps, 1, memory_order_relaxed);
    return 0;
}

bool hark__rec_template_ok(const char *tmpl)
{
    if (!tmpl || !tmpl[0])
        return false;
    for (const char *p = tmpl; *p; p++)
        if (*p == '%') {
            p++;
            if (*p != 'p' && *p != 'n' && *p != '%')
                return false;
        }
    return true;
}

bool hark__rec_expand_path(char *out, size_t cap, const char *tmpl, long pid, uint64_t seq)
{
    hark__buf w = hark__buf_fixed(out, cap - 1);
    for (const char *p = tmpl; *p; p++) {
        if (*p != '%') {
            hark__buf_putc(&w, *p);
            continue;
        }
        p++;
        if (*p == 'p')
            hark__buf_i64(&w, pid);
        else if (*p == 'n')
            hark__buf_u64(&w, seq);
        else if (*p == '%')
            hark__buf_putc(&w, '%');
        else
            return false;
    }
    if (w.over)
        return false;
    out[w.len] = 0;
    return true;
}

int hark__rec_dump_to_template(hark_recorder *r, const char *tmpl, hark_recorder_format format,
                               const char *reason)
{
    char path[4096];
    uint64_t seq = atomic_fetch_add_explicit(&r->dump_seq, 1, memory_order_relaxed) + 1;
    if (!hark__rec_expand_path(path, sizeof path, tmpl, (long)getpid(), seq)) {
        errno = ENAMETOOLONG;
        return HARK_EIO;
    }
    struct rdump d;
    int rc = hark__rec_dump_init(&d, r);
    if (rc != 0)
        return rc;
    d.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (d.fd < 0) {
        int err = errno;
        hark__rec_dump_fini(&d);
        errno = err;
        return HARK_EIO;
    }
    d.format = format;
    d.reason = reason;
    rc = hark__rec_dump_write(&d);
    int err = errno;
    if (close(d.fd) != 0 && rc == 0) {
        rc = HARK_EIO;
        err = errno;
    }
    hark__rec_dump_fini(&d);
    errno = err;
    return rc;
}
