/*
 * The journald sink: each record becomes one journal entry, its parts journal
 * fields (MESSAGE, PRIORITY, HARK_EVENT, HARK_DURATION_MS, HARK_TAGS, one
 * HARK_<KEY> per payload field), sent with sd_journal_sendv(). Without libsystemd
 * at build time the constructor reports HARK_ENOTSUP.
 */
#include "logger_internal.h"
#include "log_ext.h"
#include "hark/log_sinks.h"
#include "alloc.h"

#include <stdio.h>
#include <string.h>

#ifndef HARK_HAVE_JOURNALD
#define HARK_HAVE_JOURNALD 0
#endif

#if HARK_HAVE_JOURNALD
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

/* Fields of one entry at most (fixed ones and payload fields). */
#define MAX_IOV (16 + HARK_LOG_FIELDS_MAX)
/* Bytes of field text kept on the stack; a larger entry uses the heap once. */
#define ARENA 8192

typedef struct entry {
    struct iovec iov[MAX_IOV];
    int n;
    char stack[ARENA];
    char *arena;
    size_t used, cap;
    bool failed;
} entry;

/* Appends "NAME=value" (value `len` bytes) as one field. */
static void field(entry *e, const char *name, const char *value, size_t len)
{
    if (e->n == MAX_IOV || e->failed)
        return;
    size_t nl = strlen(name);
    size_t need = nl + 1 + len;
    if (e->used + need > e->cap) {
        /* Earlier fields point into the arena: start a new one only for this and
         * later fields, and keep the old one alive until the send. */
        if (e->arena != e->stack) {
            e->failed = true; /* one heap arena per entry is enough for any bounded one */
            return;
        }
        size_t cap = need + ARENA + (size_t)HARK_LOG_FIELDS_MAX * HARK_LOG_VALUE_MAX;
        char *big = hark__malloc(cap);
        if (!big) {
            e->failed = true;
            return;
        }
        e->arena = big;
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

static void fieldz(entry *e, const char *name, const char *value)
{
    field(e, name, value, strlen(value));
}

static int priority(hark_log_level level)
{
    static const int map[HARK_LOG_LEVELS] = {LOG_DEBUG, LOG_INFO, LOG_WARNING,
                                             LOG_ERR,   LOG_CRIT, LOG_ALERT};
    return (int)level >= 0 && (int)level < HARK_LOG_LEVELS ? map[level] : LOG_ALERT;
}

/* Journal field names: upper-case letters, digits and '_', not starting with '_'. */
static void field_name(char *out, size_t cap, const char *key)
{
    size_t n = (size_t)snprintf(out, cap, "HARK_");
    for (const char *k = key; *k && n + 1 < cap; k++) {
        char c = *k;
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            c = '_';
        out[n++] = c;
    }
    out[n] = '\0';
}

static void send_fields(entry *e, const hark_field *f, size_t count)
{
    char name[72], v[64];
    for (size_t i = 0; i < count && i < HARK_LOG_FIELDS_MAX; i++) {
        if (!f[i].key)
            continue;
        field_name(name, sizeof name, f[i].key);
        switch (f[i].type) {
        case HARK_TYPE_INT:
            snprintf(v, sizeof v, "%lld", (long long)f[i].as.i);
            fieldz(e, name, v);
            break;
        case HARK_TYPE_UINT:
            snprintf(v, sizeof v, "%llu", (unsigned long long)f[i].as.u);
            fieldz(e, name, v);
            break;
        case HARK_TYPE_DOUBLE:
            snprintf(v, sizeof v, "%.17g", f[i].as.d);
            fieldz(e, name, v);
            break;
        case HARK_TYPE_BOOL:
            fieldz(e, name, f[i].as.b ? "true" : "false");
            break;
        case HARK_TYPE_STRING:
            if (f[i].as.s)
                field(e, name, f[i].as.s, strnlen(f[i].as.s, HARK_LOG_VALUE_MAX));
            break;
        case HARK_TYPE_ERROR:
            if (f[i].as.error.type)
                field(e, name, f[i].as.error.type, strnlen(f[i].as.error.type, HARK_LOG_VALUE_MAX));
            break;
        default:
            break;
        }
    }
}

static int send_entry(const hark_logger *l, entry *e)
{
    if (l->ident)
        fieldz(e, "SYSLOG_IDENTIFIER", l->ident);
    int rc = e->failed ? HARK_ENOMEM : sd_journal_sendv(e->iov, e->n) == 0 ? 0 : HARK_EIO;
    if (e->arena != e->stack)
        hark__free(e->arena);
    return rc;
}

static void entry_init(entry *e)
{
    e->n = 0;
    e->arena = e->stack;
    e->used = 0;
    e->cap = sizeof e->stack;
    e->failed = false;
}

int hark__journald_send(const hark_logger *l, const hark_log_record *rec)
{
    entry e;
    entry_init(&e);
    char v[64];
    size_t mlen = rec->message ? rec->length : 0;
    if (mlen > 0 && rec->message[mlen - 1] == '\n')
        mlen--;
    if (mlen > HARK_LOG_MESSAGE_MAX)
        mlen = HARK_LOG_MESSAGE_MAX;
    field(&e, "MESSAGE", rec->message ? rec->message : "", mlen);
    snprintf(v, sizeof v, "%d", priority(rec->level));
    fieldz(&e, "PRIORITY", v);
    if (rec->tag_count > 0 && rec->tags) {
        char tags[HARK__LOG_TAGS_TEXT];
        size_t n = 0;
        for (size_t i = 0; i < rec->tag_count && i < HARK_LOG_TAGS_MAX; i++) {
            size_t tl = strnlen(rec->tags[i], HARK_LOG_TAG_LEN);
            if (i > 0)
                tags[n++] = ',';
            memcpy(tags + n, rec->tags[i], tl);
            n += tl;
        }
        field(&e, "HARK_TAGS", tags, n);
    }
    if (rec->event) {
        fieldz(&e, "HARK_EVENT", rec->event);
        snprintf(v, sizeof v, "%.3f", rec->duration_ms);
        fieldz(&e, "HARK_DURATION_MS", v);
        if (rec->transaction_id && rec->transaction_id[0])
            fieldz(&e, "HARK_TRANSACTION_ID", rec->transaction_id);
        if (rec->event_id) {
            snprintf(v, sizeof v, "%llu", (unsigned long long)rec->event_id);
            fieldz(&e, "HARK_EVENT_ID", v);
        }
    }
    if (rec->thread_id) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)rec->thread_id);
        fieldz(&e, "TID", v);
    }
    if (rec->fields)
        send_fields(&e, rec->fields, rec->field_count);
    return send_entry(l, &e);
}

int hark__journald_send_line(const hark_logger *l, hark_log_level level, const char *line,
                             size_t len)
{
    hark_log_record rec = {.level = level, .message = line, .length = len};
    return hark__journald_send(l, &rec);
}

int hark_logger_new_journald(hark_logger **out, const char *identifier)
{
    if (!out)
        return HARK_EINVAL;
    hark_logger *l = hark__logger_alloc(HARK__SINK_JOURNALD);
    if (!l)
        return HARK_ENOMEM;
    if (identifier) {
        l->ident = hark__strdup(identifier);
        if (!l->ident) {
            hark__logger_dealloc(l);
            return HARK_ENOMEM;
        }
    }
    *out = l;
    return 0;
}

#else /* !HARK_HAVE_JOURNALD */

int hark__journald_send(const hark_logger *l, const hark_log_record *rec)
{
    (void)l, (void)rec;
    return HARK_ENOTSUP;
}

int hark__journald_send_line(const hark_logger *l, hark_log_level level, const char *line,
                             size_t len)
{
    (void)l, (void)level, (void)line, (void)len;
    return HARK_ENOTSUP;
}

int hark_logger_new_journald(hark_logger **out, const char *identifier)
{
    (void)identifier;
    return out ? HARK_ENOTSUP : HARK_EINVAL;
}

#endif

bool hark_log_journald_available(void)
{
    return HARK_HAVE_JOURNALD ? true : false;
}
