/*
 * printf calls captured for later formatting: a format is parsed once into
 * argument descriptions and interned; each call then copies only its arguments,
 * and the writer thread rebuilds the line with the same printf.
 */
#include "log_capture.h"
#include "alloc.h"
#include "error.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <wchar.h>

/* Interned formats per writer, and slots of the table (load at most one half). */
#define FMT_MAX 2048
#define FMT_SLOTS 4096
/* Different formats seen at one address before it counts as a buffer the
 * program rewrites (its lines then copy their format each time). */
#define SAME_KEY_MAX 4

/* ------------------------------------------------------------------------- */
/* Parsing                                                                   */
/* ------------------------------------------------------------------------- */

/* A conversion specification, as parsed from a format string. */
struct spec {
    const char *start; /* at the '%' */
    size_t len;        /* through the conversion character */
    bool star_width, star_prec;
    int prec;   /* -1: none given */
    int length; /* L_* */
    char conv;
};

static bool is_flag(char c)
{
    return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0' || c == '\'';
}

/* The integer conversions. */
static bool is_int_conv(char c)
{
    return c != '\0' && strchr("diouxX", c) != NULL;
}

/* The conversions the capture handles. */
static bool is_conv(char c)
{
    return c != '\0' && strchr("diouxXcspfFeEgGaA", c) != NULL;
}

/* Reads the digits at *q as a width or precision into *out; false when the value
 * does not fit an int (printf then fails with EOVERFLOW, so the call must be
 * formatted at once, where the error reaches the caller). */
static bool parse_count(const char **q, int *out)
{
    long long v = 0;
    while (**q >= '0' && **q <= '9') {
        v = v * 10 + (*(*q)++ - '0');
        if (v > INT_MAX)
            return false;
    }
    *out = (int)v;
    return true;
}

/* Reads the length modifier at *q, if any, and moves past it. */
static uint8_t parse_length(const char **q)
{
    const char *c = *q;
    if (*c == 'h' || *c == 'l') {
        bool twice = c[1] == *c;
        *q += twice ? 2 : 1;
        if (*c == 'h')
            return twice ? HARK__LEN_HH : HARK__LEN_H;
        return twice ? HARK__LEN_LL : HARK__LEN_L;
    }
    static const char letters[] = "qjztL";
    static const uint8_t lengths[] = {HARK__LEN_LL, HARK__LEN_J, HARK__LEN_Z, HARK__LEN_T,
                                      HARK__LEN_LD};
    const char *at = *c ? strchr(letters, *c) : NULL;
    if (!at)
        return HARK__LEN_NONE;
    (*q)++;
    return lengths[at - letters];
}

/* Parses the specification at `p` (just after '%'). Returns false for what the
 * capture does not handle (positional arguments, %n, %m, wide strings ...). */
static bool parse_spec(const char *p, struct spec *sp)
{
    const char *q = p;
    sp->start = p - 1;
    sp->star_width = sp->star_prec = false;
    sp->prec = -1;
    sp->length = HARK__LEN_NONE;
    while (is_flag(*q))
        q++;
    int width;
    if (*q == '*') {
        sp->star_width = true;
        q++;
    } else if (!parse_count(&q, &width)) {
        return false;
    }
    if (*q == '$')
        return false;
    if (*q == '.') {
        q++;
        if (*q == '*') {
            sp->star_prec = true;
            q++;
        } else if (!parse_count(&q, &sp->prec)) {
            return false;
        }
    }
    /* A length modifier C gives no meaning for the conversion is left to printf
     * on the calling thread: glibc reads some as other types ('L', "ll" and 'q'
     * are one modifier to it, which makes %c and %s wide, as 'z', 'j' and 't' do),
     * and others send it down a path that reads the arguments differently ("%he"
     * makes a later "%qd" print 0). 'L' on an integer conversion is glibc's long
     * long, and kept. */
    bool odd = false;
    sp->length = parse_length(&q);
    sp->conv = *q;
    if (!is_conv(*q))
        return false;
    if (is_int_conv(sp->conv)) {
        if (sp->length == HARK__LEN_LD)
            sp->length = HARK__LEN_LL;
    } else if (strchr("csp", sp->conv)) {
        odd = sp->length != HARK__LEN_NONE;
    } else { /* floating point */
        odd =
            sp->length != HARK__LEN_NONE && sp->length != HARK__LEN_L && sp->length != HARK__LEN_LD;
    }
    if (odd)
        return false;
    sp->len = (size_t)(q + 1 - sp->start);
    /* Longer ones are formatted eagerly, so replay() can rebuild any in 96 bytes. */
    return sp->len <= 48;
}

int hark__fmt_parse(const char *fmt, struct hark__arg_desc *args, uint32_t *bytes)
{
    int n = 0;
    uint32_t size = 0;
    for (const char *p = fmt; (p = strchr(p, '%')); p++) {
        if (p[1] == '%') {
            p++;
            continue;
        }
        struct spec sp;
        if (!parse_spec(p + 1, &sp))
            return -1;
        p = sp.start + sp.len - 1;
        int stars = (int)sp.star_width + (int)sp.star_prec;
        if (n + stars + 1 > HARK__CAPTURE_ARGS)
            return -1;
        for (int i = 0; i < stars; i++) {
            args[n++] = (struct hark__arg_desc){.kind = HARK__ARG_STAR, .prec = -1};
            size += 8;
        }
        struct hark__arg_desc *d = &args[n++];
        *d = (struct hark__arg_desc){.length = (uint8_t)sp.length, .prec = -1};
        switch (sp.conv) {
        case 'd':
        case 'i':
            d->kind = HARK__ARG_INT;
            break;
        case 'o':
        case 'u':
        case 'x':
        case 'X':
            d->kind = HARK__ARG_UINT;
            break;
        case 'c':
            /* %c takes an int, as %d does. */
            d->kind = HARK__ARG_INT;
            d->length = HARK__LEN_NONE;
            break;
        case 'p':
            d->kind = HARK__ARG_PTR;
            break;
        case 's':
            d->kind = HARK__ARG_STR;
            d->prec = sp.star_prec ? HARK__PREC_STAR : sp.prec;
            break;
        default: /* floating point */
            d->kind = sp.length == HARK__LEN_LD ? HARK__ARG_LDOUBLE : HARK__ARG_DOUBLE;
            break;
        }
        size += d->kind == HARK__ARG_LDOUBLE ? (uint32_t)sizeof(long double) : 8;
    }
    *bytes = size;
    return n;
}

/* ------------------------------------------------------------------------- */
/* Interning                                                                 */
/* ------------------------------------------------------------------------- */

int hark__fmt_table_init(struct hark__fmt_table *t)
{
    t->slots = hark__calloc_lines(FMT_SLOTS * sizeof *t->slots);
    if (!t->slots)
        return HARK_ENOMEM;
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        hark__free_lines(t->slots);
        t->slots = NULL;
        return hark__error(HARK_ENOMEM, "the format table's mutex cannot be made");
    }
    t->mask = FMT_SLOTS - 1;
    t->count = 0;
    t->all = NULL;
    return 0;
}

void hark__fmt_table_free(struct hark__fmt_table *t)
{
    if (!t->slots)
        return;
    for (struct hark__fmt *f = t->all, *next; f; f = next) {
        next = f->next_all;
        hark__free_lines(f);
    }
    hark__free_lines(t->slots);
    t->slots = NULL;
    pthread_mutex_destroy(&t->lock);
}

/*
 * Looks `fmt` up. Returns the match, or NULL with *at at the free slot that ends
 * the probe; *full is set when the address has held SAME_KEY_MAX other formats.
 */
static const struct hark__fmt *probe(struct hark__fmt_table *t, const char *fmt, size_t *at,
                                     bool *full)
{
    size_t i = hark__fmt_slot(t, fmt);
    int same = 0;
    for (;;) {
        /* Acquire: pairs with the release store that published the format. */
        const struct hark__fmt *f = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!f)
            break;
        /* The address alone is not enough: a buffer may hold another format now. */
        if (f->key == fmt) {
            if (strcmp(f->text, fmt) == 0)
                return f;
            same++;
        }
        i = (i + 1) & t->mask;
    }
    *at = i;
    *full = same >= SAME_KEY_MAX;
    return NULL;
}

const struct hark__fmt *hark__fmt_intern(struct hark__fmt_table *t, const char *fmt)
{
    size_t at;
    bool full;
    const struct hark__fmt *f = probe(t, fmt, &at, &full);
    if (HARK_LIKELY(f != NULL) || full)
        return f;
    pthread_mutex_lock(&t->lock);
    /* Again under the lock: another thread may have interned it meanwhile. */
    f = probe(t, fmt, &at, &full);
    if (f || full || t->count >= FMT_MAX)
        goto out;
    struct hark__arg_desc args[HARK__CAPTURE_ARGS];
    uint32_t bytes = 0;
    int n = hark__fmt_parse(fmt, args, &bytes);
    size_t len = strlen(fmt);
    if (len > UINT32_MAX - 64)
        goto out;
    size_t nargs = n > 0 ? (size_t)n : 0;
    struct hark__fmt *nf = hark__calloc_lines(sizeof *nf + nargs * sizeof nf->args[0] + len + 1);
    if (!nf)
        goto out;
    char *text = (char *)&nf->args[nargs];
    memcpy(text, fmt, len + 1);
    nf->key = fmt;
    nf->text = text;
    nf->len = (uint32_t)len;
    nf->nargs = n;
    nf->bytes = bytes;
    memcpy(nf->args, args, nargs * sizeof args[0]);
    nf->next_all = t->all;
    t->all = nf;
    t->count++;
    /* Release: a reader that loads the pointer sees the whole format. */
    atomic_store_explicit(&t->slots[at], nf, memory_order_release);
    f = nf;
out:
    pthread_mutex_unlock(&t->lock);
    return f;
}

/* ------------------------------------------------------------------------- */
/* HARK_LOGF call sites                                                      */
/* ------------------------------------------------------------------------- */

_Static_assert(sizeof(struct hark__arg_desc) <= sizeof(uint64_t),
               "an argument description fits a call site's desc_ word");

static bool is_integer(uint8_t type)
{
    return type == HARK__LT_INT || type == HARK__LT_UINT || type == HARK__LT_LONG ||
           type == HARK__LT_ULONG;
}

/* Whether an argument of C type class `type` (HARK__LT_*) is exactly what a
 * conversion `d` reads: integers of any width for integer conversions (printf
 * narrows them as hark__narrow_*() do), a floating type for a floating one, a
 * character pointer for %s, any pointer for %p. */
static bool type_fits(const struct hark__arg_desc *d, uint8_t type)
{
    switch (d->kind) {
    case HARK__ARG_STAR:
    case HARK__ARG_INT:
    case HARK__ARG_UINT:
        return is_integer(type);
    case HARK__ARG_DOUBLE:
        return type == HARK__LT_DOUBLE;
    case HARK__ARG_PTR:
        return type == HARK__LT_PTR || type == HARK__LT_STR;
    case HARK__ARG_STR:
        return type == HARK__LT_STR;
    default: /* long double: not captured from a word */
        return false;
    }
}

/* Whether the argument's word is already what hark__site_capture() would store:
 * no narrowing to do and no string to copy. */
static bool word_is_plain(const struct hark__arg_desc *d, uint8_t type)
{
    bool wide = d->length == HARK__LEN_L || d->length == HARK__LEN_LL || d->length == HARK__LEN_J ||
                d->length == HARK__LEN_Z || d->length == HARK__LEN_T;
    switch (d->kind) {
    case HARK__ARG_STAR:
        return false; /* hark__site_capture() refuses a '*' value of INT_MIN */
    case HARK__ARG_INT:
        return d->length == HARK__LEN_NONE
                   ? type == HARK__LT_INT
                   : wide && (type == HARK__LT_LONG || type == HARK__LT_ULONG);
    case HARK__ARG_UINT:
        return d->length == HARK__LEN_NONE
                   ? type == HARK__LT_UINT
                   : wide && (type == HARK__LT_LONG || type == HARK__LT_ULONG);
    case HARK__ARG_DOUBLE:
    case HARK__ARG_PTR:
        return true;
    default:
        return false;
    }
}

static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;

int hark__site_check(hark_log_site *site)
{
    pthread_mutex_lock(&site_lock);
    int st = __atomic_load_n(&site->check_, __ATOMIC_RELAXED);
    if (st == 0) {
        struct hark__arg_desc args[HARK__CAPTURE_ARGS];
        uint32_t bytes = 0;
        int n = site->fmt ? hark__fmt_parse(site->fmt, args, &bytes) : -1;
        bool fits = n == (int)site->nargs && n <= HARK_LOGF_MAX_ARGS, plain = true;
        for (int i = 0; fits && i < n; i++) {
            fits = type_fits(&args[i], site->type[i]);
            plain = plain && word_is_plain(&args[i], site->type[i]);
            memcpy(&site->desc_[i], &args[i], sizeof args[i]);
        }
        st = !fits ? HARK__SITE_FALLBACK : plain ? HARK__SITE_PLAIN : HARK__SITE_CAPTURE;
        /* Release: a caller that sees the answer sees the descriptions. */
        __atomic_store_n(&site->check_, st, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&site_lock);
    return st;
}

/* ------------------------------------------------------------------------- */
/* Replaying                                                                 */
/* ------------------------------------------------------------------------- */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
/* Rebuilds the specification at `q` (just after its '%') into `spec`: flags,
 * width and precision, the '*' values read from *args in place. Returns its
 * length; the length modifier and conversion are replay_one()'s. */
static size_t rebuild_spec(char *spec, size_t cap, const char *q, const struct spec *sp,
                           const char **args)
{
    size_t sn = 0;
    spec[sn++] = '%';
    while (is_flag(*q))
        spec[sn++] = *q++;
    if (sp->star_width) {
        long long w;
        memcpy(&w, *args, 8);
        *args += 8;
        sn += (size_t)snprintf(spec + sn, cap - sn, "%lld", w);
        q++;
    } else {
        while (*q >= '0' && *q <= '9')
            spec[sn++] = *q++;
    }
    if (*q != '.')
        return sn;
    q++;
    if (sp->star_prec) {
        long long pr;
        memcpy(&pr, *args, 8);
        *args += 8;
        if (pr >= 0)
            sn += (size_t)snprintf(spec + sn, cap - sn, ".%lld", pr);
    } else {
        spec[sn++] = '.';
        while (*q >= '0' && *q <= '9')
            spec[sn++] = *q++;
    }
    return sn;
}

/* Formats one captured argument with `spec` (its first `sn` bytes written),
 * completed by a length modifier matching how the value was stored. */
static int replay_one(struct hark_log_buf *b, char *spec, size_t sn, const struct spec *sp,
                      const char **args, const char **strings)
{
    char c = sp->conv;
    unsigned long long u;
    double d;
    long double ld;
    void *ptr;
    if (is_int_conv(c)) {
        /* Integers travel as 8 bytes; the signed ones are read back as such. */
        memcpy(&u, *args, 8);
        *args += 8;
        memcpy(spec + sn, (char[]){'l', 'l', c, '\0'}, 4);
        if (c == 'd' || c == 'i')
            return hark_log_buf_printf(b, spec, (long long)u);
        return hark_log_buf_printf(b, spec, u);
    }
    switch (c) {
    case 'c':
        memcpy(&u, *args, 8);
        *args += 8;
        memcpy(spec + sn, "c", 2);
        return hark_log_buf_printf(b, spec, (int)(long long)u);
    case 'p':
        memcpy(&ptr, *args, sizeof ptr);
        *args += 8;
        memcpy(spec + sn, "p", 2);
        return hark_log_buf_printf(b, spec, ptr);
    case 's': {
        uint64_t len;
        memcpy(&len, *args, 8);
        *args += 8;
        memcpy(spec + sn, "s", 2);
        if (len == UINT64_MAX)
            return hark_log_buf_printf(b, spec, (const char *)NULL);
        int rc = hark_log_buf_printf(b, spec, *strings);
        *strings += len + 1;
        return rc;
    }
    default:
        break;
    }
    if (sp->length == HARK__LEN_LD) {
        memcpy(&ld, *args, sizeof ld);
        *args += sizeof ld;
        spec[sn++] = 'L';
        spec[sn++] = c;
        spec[sn] = '\0';
        return hark_log_buf_printf(b, spec, ld);
    }
    memcpy(&d, *args, 8);
    *args += 8;
    spec[sn++] = c;
    spec[sn] = '\0';
    return hark_log_buf_printf(b, spec, d);
}

int hark__fmt_replay(struct hark_log_buf *b, const char *fmt, const char *args, const char *strings)
{
    const char *lit = fmt;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%')
            continue;
        hark_log_buf_append(b, lit, (size_t)(p - lit));
        if (p[1] == '%') {
            hark__lbuf_putc(b, '%');
            lit = ++p + 1;
            continue;
        }
        struct spec sp;
        if (!parse_spec(p + 1, &sp))
            /* Not reached: hark__fmt_parse() accepted it. */
            return hark__error(HARK_EINVAL, "a format's directive cannot be replayed");
        char spec[96];
        size_t sn = rebuild_spec(spec, sizeof spec, p + 1, &sp, &args);
        int rc = replay_one(b, spec, sn, &sp, &args, &strings);
        if (rc != 0)
            return rc;
        p = sp.start + sp.len - 1;
        lit = p + 1;
    }
    return hark_log_buf_append(b, lit, strlen(lit));
}
#pragma GCC diagnostic pop
