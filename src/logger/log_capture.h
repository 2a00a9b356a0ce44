/*
 * Internal: printf calls captured for later formatting (the asynchronous writer).
 *
 * A format string is parsed once into argument descriptions and interned in a
 * table owned by the asynchronous writer; a logging call then only looks its
 * format up (by address, verified by content), takes its arguments as the
 * descriptions say and queues them with a pointer to the interned format. The
 * writer thread formats them. Never installed.
 */
#ifndef HARK_LOG_CAPTURE_H
#define HARK_LOG_CAPTURE_H

#include "logger_internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <wchar.h>

/* Most arguments one captured call may have; more are formatted on the caller. */
#define HARK__CAPTURE_ARGS 32

/* printf length modifiers. */
enum hark__length {
    HARK__LEN_NONE,
    HARK__LEN_HH,
    HARK__LEN_H,
    HARK__LEN_L,
    HARK__LEN_LL,
    HARK__LEN_J,
    HARK__LEN_Z,
    HARK__LEN_T,
    HARK__LEN_LD
};

/* How one argument is taken from the va_list and stored: 8 bytes (long double:
 * its own size; a string: its length word, UINT64_MAX for NULL), in order, and
 * then the bytes of every non-NULL string with a NUL, in order. */
enum hark__arg_kind {
    HARK__ARG_INT,     /* a signed integer of `length`, stored as long long */
    HARK__ARG_UINT,    /* an unsigned integer of `length`, stored as unsigned long long */
    HARK__ARG_STAR,    /* an int '*' width or precision */
    HARK__ARG_PTR,     /* %p */
    HARK__ARG_STR,     /* %s */
    HARK__ARG_DOUBLE,  /* %f %e %g %a ... */
    HARK__ARG_LDOUBLE, /* %Lf ... */
};

/* Precision of a %s argument that comes from a preceding '*'. */
#define HARK__PREC_STAR (-2)

struct hark__arg_desc {
    uint8_t kind;   /* enum hark__arg_kind */
    uint8_t length; /* the length modifier, for INT and UINT */
    int32_t prec;   /* %s: -1 none, HARK__PREC_STAR, or the precision */
};

/* A %s argument, whose bytes follow the fixed-size arguments of an entry. */
struct hark__str {
    const char *s;
    size_t len;
};

/* An interned format: immutable once published, freed with its table. */
struct hark__fmt {
    const char *key;  /* the address it was logged with */
    const char *text; /* its own copy of the format */
    uint32_t len;     /* of text, NUL excluded */
    int32_t nargs;    /* -1: the format is formatted on the calling thread */
    uint32_t bytes;   /* bytes of its fixed-size arguments (strings' bytes excluded) */
    struct hark__fmt *next_all;
    struct hark__arg_desc args[]; /* nargs of them; the text follows */
};

/* The formats a writer has interned: an open-addressed, insert-only table read
 * without a lock. */
struct hark__fmt_table {
    _Atomic(const struct hark__fmt *) *slots;
    size_t mask;
    size_t count;          /* interned; changed under `lock` */
    struct hark__fmt *all; /* every interned format, for freeing */
    pthread_mutex_t lock;  /* serialises inserts */
};

/* Returns 0 or HARK_ENOMEM. */
int hark__fmt_table_init(struct hark__fmt_table *t);
/* Frees every interned format. No other thread may use the table. */
void hark__fmt_table_free(struct hark__fmt_table *t);

/*
 * The interned form of `fmt`, interning it on first use; NULL when it cannot be
 * interned (the table is full, the address has held too many different formats,
 * out of memory): the caller then copies the format with its arguments. A hit
 * takes no lock and allocates nothing.
 */
const struct hark__fmt *hark__fmt_intern(struct hark__fmt_table *t, const char *fmt);

/* Parses `fmt` into at most HARK__CAPTURE_ARGS descriptions. Returns their count,
 * or -1 when the format must be formatted on the calling thread (%n, %m,
 * positional or wide-string arguments, a width or precision above INT_MAX, too
 * many arguments). *bytes receives the
 * captured size, string contents excluded. */
int hark__fmt_parse(const char *fmt, struct hark__arg_desc *args, uint32_t *bytes);

static inline long long hark__take_signed(int length, va_list *ap)
{
    switch (length) {
    case HARK__LEN_HH:
        return (signed char)va_arg(*ap, int);
    case HARK__LEN_H:
        return (short)va_arg(*ap, int);
    case HARK__LEN_L:
        return va_arg(*ap, long);
    case HARK__LEN_LL:
        return va_arg(*ap, long long);
    case HARK__LEN_J:
        return (long long)va_arg(*ap, intmax_t);
    case HARK__LEN_Z:
        return (long long)va_arg(*ap, ssize_t);
    case HARK__LEN_T:
        return (long long)va_arg(*ap, ptrdiff_t);
    default:
        return va_arg(*ap, int);
    }
}

static inline unsigned long long hark__take_unsigned(int length, va_list *ap)
{
    switch (length) {
    case HARK__LEN_HH:
        return (unsigned char)va_arg(*ap, unsigned);
    case HARK__LEN_H:
        return (unsigned short)va_arg(*ap, unsigned);
    case HARK__LEN_L:
        return va_arg(*ap, unsigned long);
    case HARK__LEN_LL:
        return va_arg(*ap, unsigned long long);
    case HARK__LEN_J:
        return (unsigned long long)va_arg(*ap, uintmax_t);
    case HARK__LEN_Z:
        return va_arg(*ap, size_t);
    case HARK__LEN_T:
        return (unsigned long long)va_arg(*ap, ptrdiff_t);
    default:
        return va_arg(*ap, unsigned);
    }
}

/*
 * A %s argument `s` with precision `prec` (HARK__PREC_STAR: the last '*' value,
 * `star`): its word (the length, UINT64_MAX for NULL) into *word, its bytes noted
 * in strs[*ns] and *str_bytes (with a NUL). False when it is too long to queue.
 */
static inline bool hark__take_str(const char *s, int32_t prec, long long star, uint64_t *word,
                                  struct hark__str *strs, int *ns, size_t *str_bytes)
{
    /* A negative '*' precision counts as none. Never read past a precision: the
     * string need not end before it. */
    long long p = prec == HARK__PREC_STAR ? star : prec;
    size_t len = !s ? 0 : p >= 0 ? strnlen(s, (size_t)p) : strlen(s);
    if (len > UINT32_MAX - 16)
        return false;
    *word = s ? len : UINT64_MAX;
    if (s) {
        strs[*ns].s = s;
        strs[(*ns)++].len = len;
        *str_bytes += len + 1;
    }
    return true;
}

/*
 * Takes the `n` arguments `desc` describes from `ap`: the fixed-size part into
 * `words` (the format's `bytes`), the strings into `strs` (*nstr of them).
 * Returns the bytes the strings take (each with a NUL), or SIZE_MAX when one is
 * too long or a '*' value is INT_MIN. Inline: the common call has one or two
 * numbers.
 */
static inline size_t hark__fmt_capture(const struct hark__arg_desc *desc, int n, va_list *ap,
                                       unsigned char *words, struct hark__str *strs, int *nstr)
{
    size_t str_bytes = 0;
    int ns = 0;
    long long star = -1; /* the last '*' value, for a %.*s */
    for (int i = 0; i < n; i++) {
        const struct hark__arg_desc *d = &desc[i];
        union {
            long long i;
            unsigned long long u;
            double d;
            const void *p;
        } v;
        switch (d->kind) {
        case HARK__ARG_STAR:
            v.i = star = va_arg(*ap, int);
            /* A width of INT_MIN makes printf fail (its magnitude is no int):
             * formatted at once, the caller gets the error. */
            if (star == INT_MIN)
                return SIZE_MAX;
            break;
        case HARK__ARG_INT:
            v.i = hark__take_signed(d->length, ap);
            break;
        case HARK__ARG_UINT:
            v.u = hark__take_unsigned(d->length, ap);
            break;
        case HARK__ARG_PTR:
            v.p = va_arg(*ap, void *);
            break;
        case HARK__ARG_STR: {
            uint64_t len_word;
            if (!hark__take_str(va_arg(*ap, const char *), d->prec, star, &len_word, strs, &ns,
                                &str_bytes))
                return SIZE_MAX;
            v.u = len_word;
            break;
        }
        case HARK__ARG_LDOUBLE: {
            long double ld = va_arg(*ap, long double);
            memcpy(words, &ld, sizeof ld);
            words += sizeof ld;
            continue;
        }
        default:
            v.d = va_arg(*ap, double);
            break;
        }
        memcpy(words, &v, 8);
        words += 8;
    }
    *nstr = ns;
    return str_bytes;
}

/* ---- HARK_LOGF call sites (hark/logf.h) ---------------------------------- */

/* What hark__site_check() decided for a call site: its words are stored as they
 * are (PLAIN), through hark__site_capture() (CAPTURE), or it goes to hark_log(). */
enum { HARK__SITE_PLAIN = 1, HARK__SITE_CAPTURE = 2, HARK__SITE_FALLBACK = 3 };

/* Parses a call site's format once and compares each conversion with the C type
 * of its argument: HARK__SITE_PLAIN or HARK__SITE_CAPTURE when every argument can
 * be stored as hark__fmt_capture() would store it (the descriptions are kept in
 * the site), else HARK__SITE_FALLBACK. Takes a process-wide lock; the answer never changes. */
int hark__site_check(hark_log_site *site);

static inline int hark__site_state(hark_log_site *site)
{
    /* Acquire: pairs with the release store in hark__site_check(), so the
     * descriptions it wrote are seen. */
    int st = __atomic_load_n(&site->check_, __ATOMIC_ACQUIRE);
    return HARK_LIKELY(st != 0) ? st : hark__site_check(site);
}

/* A signed argument as printf would read it for `length`, from its 64-bit value. */
static inline long long hark__narrow_signed(int length, uint64_t v)
{
    switch (length) {
    case HARK__LEN_HH:
        return (signed char)(int)(long long)v;
    case HARK__LEN_H:
        return (short)(int)(long long)v;
    case HARK__LEN_NONE:
        return (int)(long long)v;
    default:
        return (long long)v;
    }
}

static inline unsigned long long hark__narrow_unsigned(int length, uint64_t v)
{
    switch (length) {
    case HARK__LEN_HH:
        return (unsigned char)v;
    case HARK__LEN_H:
        return (unsigned short)v;
    case HARK__LEN_NONE:
        return (unsigned)v;
    default:
        return v;
    }
}

/*
 * Stores a checked call site's arguments `vals` (one word each, by C type) as
 * hark__fmt_capture() stores them from a va_list: 8 bytes each into `words`, the
 * strings into `strs` (*nstr). Returns the bytes the strings take (each with a
 * NUL), or SIZE_MAX when one is too long or a '*' value is INT_MIN.
 */
static inline size_t hark__site_capture(const hark_log_site *site, const uint64_t *vals,
                                        unsigned char *words, struct hark__str *strs, int *nstr)
{
    size_t str_bytes = 0;
    int ns = 0;
    long long star = -1; /* the last '*' value, for a %.*s */
    for (int i = 0; i < site->nargs; i++) {
        struct hark__arg_desc d;
        memcpy(&d, &site->desc_[i], sizeof d);
        uint64_t v = vals[i], w;
        switch (d.kind) {
        case HARK__ARG_STAR:
            star = (int)(long long)v;
            if (star == INT_MIN) /* as in hark__fmt_capture() */
                return SIZE_MAX;
            w = (uint64_t)star;
            break;
        case HARK__ARG_INT:
            w = (uint64_t)hark__narrow_signed(d.length, v);
            break;
        case HARK__ARG_UINT:
            w = hark__narrow_unsigned(d.length, v);
            break;
        case HARK__ARG_STR:
            if (!hark__take_str((const char *)(uintptr_t)v, d.prec, star, &w, strs, &ns,
                                &str_bytes))
                return SIZE_MAX;
            break;
        default: /* a double or a pointer: the word as it is */
            w = v;
            break;
        }
        memcpy(words + 8 * (size_t)i, &w, 8);
    }
    *nstr = ns;
    return str_bytes;
}

/* Formats `fmt` with arguments stored as captured into `b`: `args` the
 * fixed-size part, `strings` the string bytes. Returns 0 or the buffer's error. */
int hark__fmt_replay(struct hark_log_buf *b, const char *fmt, const char *args,
                     const char *strings);

/* The slot where the probe for `fmt` starts: its address, hashed. */
static inline size_t hark__fmt_slot(const struct hark__fmt_table *t, const char *fmt)
{
    uint64_t x = (uint64_t)(uintptr_t)fmt * 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 40) & t->mask;
}

/* The interned form of `fmt` (see hark__fmt_intern()), the first probe inline. */
static inline const struct hark__fmt *hark__fmt_lookup(struct hark__fmt_table *t, const char *fmt)
{
    /* Acquire: pairs with the release store that published the format. */
    const struct hark__fmt *f =
        atomic_load_explicit(&t->slots[hark__fmt_slot(t, fmt)], memory_order_acquire);
    if (HARK_LIKELY(f && f->key == fmt && strcmp(f->text, fmt) == 0))
        return f;
    return hark__fmt_intern(t, fmt);
}

#endif /* HARK_LOG_CAPTURE_H */
