/*
 * The journald sink: each record becomes one journal entry, its parts journal
 * fields (MESSAGE, PRIORITY, TID, HARK_TAGS, HARK_EVENT and the event's other
 * fields, one or two HARK_<KEY> per payload field), sent with sd_journal_sendv().
 * Without libsystemd at build time the constructor reports HARK_ENOTSUP; the
 * fields of a record are still computed the same way (and unit-tested) then.
 */
#include "sinks.h"
#include "journald.h"
#include "log_ext.h"
#include "hark/sys/payload_json.h"
#include "alloc.h"
#include "error.h"
#include "number.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#ifndef HARK_HAVE_JOURNALD
#define HARK_HAVE_JOURNALD 0
#endif

/* ------------------------------------------------------------------------- */
/* The fields of a record                                                    */
/* ------------------------------------------------------------------------- */

size_t hark__journald_name(char *name, size_t len, const char *key)
{
    /* journald drops a field whose name is longer, or holds anything but
     * upper-case letters, digits and '_': a key is mapped rather than lost. */
    if (len >= HARK__JOURNALD_NAME_MAX) {
        name[HARK__JOURNALD_NAME_MAX] = '\0';
        return HARK__JOURNALD_NAME_MAX;
    }
    name[len++] = '_';
    for (const char *k = key ? key : ""; *k && len < HARK__JOURNALD_NAME_MAX; k++) {
        char c = *k;
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            c = '_';
        name[len++] = c;
    }
    name[len] = '\0';
    return len;
}

typedef struct walk {
    hark__journald_field_fn fn;
    void *ctx;
    bool cut; /* some value was cut: the entry says so, as a structured line does */
} walk;

static void put_z(walk *w, const char *name, const char *value)
{
    w->fn(w->ctx, name, value, strlen(value));
}

/* A string value of at most `max` bytes (cut at a character boundary), or null.
 * Sent as it is otherwise: the journal takes newlines and binary values. */
static void put_text(walk *w, const char *name, const char *s, size_t max)
{
    if (!s) {
        put_z(w, name, "null");
        return;
    }
    size_t n = strnlen(s, max + 1);
    size_t keep = hark__utf8_cut(s, n, max);
    w->cut = w->cut || keep < n;
    w->fn(w->ctx, name, s, keep);
}

/* The walk's state: the name being built and its length at each level. */
typedef struct name_walk {
    walk *w;
    char *name;
    size_t len[HARK_PAYLOAD_JSON_DEPTH + 2];
} name_walk;

/*
 * One payload field as the walk yields it (the fields the JSON and logfmt
 * formatters show, under the same budget), named after the payload it is in.
 */
static bool put_field(void *ctx, hark_payload_step step, const hark_payload_visit *v)
{
    name_walk *j = ctx;
    if (step == HARK_PAYLOAD_LEAVE)
        return true;
    const hark_field *f = v->field;
    size_t n = hark__journald_name(j->name, j->len[v->depth], f->key);
    if (step == HARK_PAYLOAD_ENTER) {
        j->len[v->depth + 1] = n;
        return true;
    }
    /* Numbers as logfmt writes them (number.h). */
    char text[HARK__DOUBLE_TEXT_MAX];
    switch (f->type) {
    case HARK_TYPE_INT:
        j->w->fn(j->w->ctx, j->name, text, hark__fmt_i64(text, f->as.i));
        break;
    case HARK_TYPE_UINT:
        j->w->fn(j->w->ctx, j->name, text, hark__fmt_u64(text, f->as.u));
        break;
    case HARK_TYPE_DOUBLE:
        j->w->fn(j->w->ctx, j->name, text, hark__fmt_double(text, f->as.d, HARK__DOUBLE_TEXT));
        break;
    case HARK_TYPE_BOOL:
        put_z(j->w, j->name, f->as.b ? "true" : "false");
        break;
    case HARK_TYPE_STRING:
        put_text(j->w, j->name, f->as.s, HARK_LOG_VALUE_MAX);
        break;
    case HARK_TYPE_POINTER:
        j->w->fn(j->w->ctx, j->name, text, hark__fmt_ptr(text, f->as.p));
        break;
    case HARK_TYPE_PAYLOAD:
        /* null and "..." as every JSON rendering (hark/sys/payload_json.h);
         * the walk enters the others. */
        put_z(j->w, j->name, f->as.payload ? "..." : "null");
        break;
    case HARK_TYPE_ERROR:
        /* KEY=type and KEY_MESSAGE=message, as logfmt's key= and key.message=. */
        put_text(j->w, j->name, f->as.error.type, HARK_LOG_VALUE_MAX);
        hark__journald_name(j->name, n, "message");
        put_text(j->w, j->name, f->as.error.message, HARK_LOG_VALUE_MAX);
        break;
    default:
        put_z(j->w, j->name, "null");
        break;
    }
    return true;
}

static int priority(hark_log_level level)
{
    static const int map[HARK_LOG_LEVELS] = {LOG_DEBUG, LOG_INFO, LOG_WARNING,
                                             LOG_ERR,   LOG_CRIT, LOG_ALERT};
    return (int)level >= 0 && (int)level < HARK_LOG_LEVELS ? map[level] : LOG_ALERT;
}

void hark__journald_fields(const hark_log_record *rec, hark__journald_field_fn fn, void *ctx)
{
    walk w = {fn, ctx, false};
    char v[64];
    size_t mlen = rec->message ? rec->length : 0;
    if (mlen > 0 && rec->message[mlen - 1] == '\n')
        mlen--;
    size_t keep = rec->message ? hark__utf8_cut(rec->message, mlen, HARK_LOG_MESSAGE_MAX) : 0;
    w.cut = keep < mlen;
    fn(ctx, "MESSAGE", rec->message ? rec->message : "", keep);
    snprintf(v, sizeof v, "%d", priority(rec->level));
    put_z(&w, "PRIORITY", v);
    if (rec->tag_count > 0 && rec->tags) {
        char tags[HARK__LOG_TAGS_TEXT];
        size_t n = 0;
        for (size_t i = 0; i < rec->tag_count && i < HARK_LOG_TAGS_MAX; i++) {
            /* A record built by hand may hold NULL tags: empty, as the formatters
             * write them. */
            const char *t = rec->tags[i] ? rec->tags[i] : "";
            size_t tn = strnlen(t, HARK_LOG_TAG_LEN + 1);
            size_t tl = hark__utf8_cut(t, tn, HARK_LOG_TAG_LEN);
            w.cut = w.cut || tl < tn;
            if (i > 0)
                tags[n++] = ',';
            memcpy(tags + n, t, tl);
            n += tl;
        }
        fn(ctx, "HARK_TAGS", tags, n);
    }
    if (rec->event) {
        put_text(&w, "HARK_EVENT", rec->event, HARK_LOG_VALUE_MAX);
        snprintf(v, sizeof v, "%.3f", rec->duration_ms);
        put_z(&w, "HARK_DURATION_MS", v);
        if (rec->transaction_id && rec->transaction_id[0])
            put_text(&w, "HARK_TRANSACTION_ID", rec->transaction_id, HARK_LOG_VALUE_MAX);
        if (rec->event_id) {
            snprintf(v, sizeof v, "%" PRIu64, rec->event_id);
            put_z(&w, "HARK_EVENT_ID", v);
        }
        if (rec->parent_id) {
            snprintf(v, sizeof v, "%" PRIu64, rec->parent_id);
            put_z(&w, "HARK_PARENT_ID", v);
        }
    }
    if (rec->thread_id) {
        snprintf(v, sizeof v, "%" PRIu64, rec->thread_id);
        put_z(&w, "TID", v);
    }
    if (rec->field_count > 0 && rec->fields) {
        char name[HARK__JOURNALD_NAME_MAX + 1] = "HARK";
        name_walk j = {&w, name, {4}};
        uint32_t n = rec->field_count > UINT32_MAX ? UINT32_MAX : (uint32_t)rec->field_count;
        hark_payload p = {(hark_field *)(uintptr_t)rec->fields, n, n};
        (void)hark_payload_walk(&p, HARK_LOG_FIELDS_MAX, put_field, &j);
    }
    if (w.cut)
        put_z(&w, "HARK_TRUNCATED", "true");
}

/* ------------------------------------------------------------------------- */
/* Sending                                                                   */
/* ------------------------------------------------------------------------- */

#if HARK_HAVE_JOURNALD
#include <sys/uio.h>
/* Without this, sd_journal_sendv() is a macro adding CODE_FILE, CODE_LINE and
 * CODE_FUNC: this file's own place (and build path), which says nothing about
 * the line logged. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

/* Fields of one entry at most: the fixed ones (eleven) and two per payload field
 * (an error's type and message). */
#define MAX_IOV (16 + 2 * HARK_LOG_FIELDS_MAX)
/* Bytes of field text kept on the stack; a larger entry adds heap chunks. */
#define ARENA 8192

/* A heap chunk of field text; earlier fields point into earlier chunks, so all
 * are kept until the send. */
typedef struct chunk {
    struct chunk *next;
    char data[];
} chunk;

typedef struct entry {
    struct iovec iov[MAX_IOV];
    int n;
    char stack[ARENA];
    char *arena;
    size_t used, cap;
    chunk *heap;
    int err;
} entry;

/* Appends "NAME=value" (value `len` bytes, any bytes) as one field. */
static void add_field(void *ctx, const char *name, const char *value, size_t len)
{
    entry *e = ctx;
    if (e->err)
        return;
    if (e->n == MAX_IOV) {
        e->err = HARK_ELIMIT; /* not reached: MAX_IOV bounds what a record yields */
        return;
    }
    size_t nl = strlen(name);
    size_t need = nl + 1 + len;
    if (need > e->cap - e->used) {
        size_t cap = need > 8 * ARENA ? need : 8 * ARENA;
        chunk *c = hark__malloc(sizeof *c + cap);
        if (!c) {
            e->err = HARK_ENOMEM;
            return;
        }
        c->next = e->heap;
        e->heap = c;
        e->arena = c->data;
        e->used = 0;
        e->cap = cap;
    }
    char *p = e->arena + e->used;
    memcpy(p, name, nl);
    p[nl] = '=';
    memcpy(p + nl + 1, value, len);
    e->iov[e->n].iov_base = p;
    e->iov[e->n].iov_len = need;
    e->n++;
    e->used += need;
}

/* The journald sink's data: the identifier, or NULL. */
typedef struct journald_sink {
    char *ident;
} journald_sink;

static int journald_write_record(const hark_log_record *rec, void *data)
{
    const journald_sink *j = data;
    entry e;
    e.n = 0;
    e.arena = e.stack;
    e.used = 0;
    e.cap = sizeof e.stack;
    e.heap = NULL;
    e.err = 0;
    hark__journald_fields(rec, add_field, &e);
    if (j->ident)
        add_field(&e, "SYSLOG_IDENTIFIER", j->ident, strlen(j->ident));
    int rc = e.err;
    if (rc == 0) {
        int sent = sd_journal_sendv(e.iov, e.n);
        if (sent < 0)
            rc = hark__error(HARK_EIO, "the journal refused the entry: %s", strerror(-sent));
    }
    while (e.heap) {
        chunk *next = e.heap->next;
        hark__free(e.heap);
        e.heap = next;
    }
    return rc;
}

/* A plain line (no record at hand): its text is the message. */
static int journald_write(hark_log_level level, const char *line, size_t len, void *data)
{
    hark_log_record rec = {.level = level, .message = line, .length = len};
    return journald_write_record(&rec, data);
}

static void journald_close(void *data)
{
    journald_sink *j = data;
    hark__free(j->ident);
    hark__free(j);
}

int hark__sink_journald(struct hark__sink *out, const char *identifier)
{
    journald_sink *j = hark__calloc(1, sizeof *j);
    if (!j)
        return HARK_ENOMEM;
    if (identifier && !(j->ident = hark__strdup(identifier))) {
        hark__free(j);
        return HARK_ENOMEM;
    }
    *out = (struct hark__sink){.ops = {.write = journald_write,
                                       .write_record = journald_write_record,
                                       .close = journald_close,
                                       .data = j,
                                       .version = HARK_LOG_SINK_VERSION}};
    return 0;
}

#else /* !HARK_HAVE_JOURNALD */

int hark__sink_journald(struct hark__sink *out, const char *identifier)
{
    (void)out, (void)identifier;
    return hark__error(HARK_ENOTSUP, "hark_logger_new_journald: built without libsystemd");
}

#endif
