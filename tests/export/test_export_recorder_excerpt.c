/*
 * The flight recorder's payload excerpts (hark/recorder.h, "What it keeps"): a
 * record keeps a copy of what the one payload rendering needs and a dump renders
 * it, so every excerpt a dump shows must be, byte for byte, what
 * hark_payload_json_members(buf, payload_bytes, payload) writes of the payload the
 * event carried -- at every excerpt size, for every field type, for strings cut
 * anywhere (inside multi-byte characters, escapes and invalid UTF-8 among them),
 * for keys that do not fit, for nesting past the depth limit, and for fields left
 * out with "_truncated":true. Random payloads from a fixed seed (of every kind, and
 * of strings only: the shape recording copies without the walk), and the hostile
 * payload of the rendering tests, at each size from the smallest to 700 bytes and
 * at the largest.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hark.h>
#include <hark/recorder.h>
#include <hark/sys/payload_json.h>

#include "hostile_payload.h"
#include "recorder_dump.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- random payloads ---------------------------------------------------------------- */

static uint64_t seed = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

static unsigned below(unsigned n)
{
    return (unsigned)(rnd() % n);
}

#define POOL_FIELDS 96
#define POOL_PAYLOADS 24
#define POOL_TEXT 32768

/* One random payload: its fields, nested payloads and strings in pools. */
typedef struct rpayload {
    hark_field fields[POOL_FIELDS];
    hark_payload nested[POOL_PAYLOADS];
    char text[POOL_TEXT];
    unsigned nf, np;
    size_t nt;
    hark_payload top;
} rpayload;

/* Pieces strings are made of: plain ASCII, bytes to escape, UTF-8 of 2, 3 and 4
 * bytes, and invalid UTF-8 (a stray continuation, a truncated sequence). */
static const char *const pieces[] = {
    "a",        "bc",           "xyz0123",          "\"",   "\\",       "\n", "\x01", "\t",
    "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xFF", "\xE2\x82", " ",  "/"};

static const char *rstring(rpayload *rp, size_t max)
{
    size_t len = below(4) == 0 ? below((unsigned)max + 1) : below(24);
    char *s = rp->text + rp->nt;
    size_t n = 0;
    while (n < len) {
        const char *p = pieces[below(sizeof pieces / sizeof pieces[0])];
        size_t k = strlen(p);
        if (rp->nt + n + k + 1 >= POOL_TEXT)
            break;
        memcpy(s + n, p, k);
        n += k;
    }
    s[n] = 0;
    rp->nt += n + 1;
    return s;
}

static const char *rkey(rpayload *rp)
{
    switch (below(12)) {
    case 0:
        return rstring(rp, 300); /* long, escaped, or empty */
    case 1:
        return "exception_object";
    default: {
        static const char *const keys[] = {"sql", "name", "k", "binds", "row_count", "cached"};
        return keys[below(6)];
    }
    }
}

static int64_t rint64(void)
{
    int64_t v = (int64_t)(rnd() >> below(64));
    return below(2) ? v : -v;
}

static void rfields(rpayload *rp, hark_payload *p, int depth);

static void rfield(rpayload *rp, hark_field *f, int depth)
{
    memset(f, 0, sizeof *f);
    f->key = below(20) == 0 ? NULL : rkey(rp);
    static const double doubles[] = {0.1, -2.5, 1e300, 3.0, 0.0, -0.0, 1.0 / 3.0, 123456789.125};
    switch (below(11)) {
    case 0:
        f->type = HARK_TYPE_INT;
        f->as.i = below(8) == 0 ? INT64_MIN : rint64();
        break;
    case 1:
        f->type = HARK_TYPE_UINT;
        f->as.u = below(8) == 0 ? UINT64_MAX : rnd() >> below(64);
        break;
    case 2:
        f->type = HARK_TYPE_DOUBLE;
        f->as.d = below(6) == 0   ? (below(2) ? NAN : -INFINITY)
                  : below(2) == 0 ? doubles[below(8)]
                                  : (double)rint64() / 1024.0;
        break;
    case 3:
        f->type = HARK_TYPE_BOOL;
        f->as.b = below(2);
        break;
    case 4:
    case 5:
        f->type = HARK_TYPE_STRING;
        f->as.s = below(10) == 0 ? NULL : rstring(rp, 900);
        break;
    case 6:
        f->type = HARK_TYPE_POINTER;
        f->as.p = below(3) == 0 ? NULL : (void *)(uintptr_t)(rnd() >> below(64));
        break;
    case 7:
    case 8:
        f->type = HARK_TYPE_PAYLOAD;
        if (below(6) == 0 || rp->np == POOL_PAYLOADS || depth > HARK_PAYLOAD_JSON_DEPTH + 1) {
            f->as.payload = NULL;
        } else {
            f->as.payload = &rp->nested[rp->np++];
            rfields(rp, f->as.payload, depth + 1);
        }
        break;
    case 9:
        f->type = HARK_TYPE_ERROR;
        f->as.error.type = below(4) == 0 ? NULL : rstring(rp, 200);
        f->as.error.message = below(4) == 0 ? NULL : rstring(rp, 400);
        break;
    default:
        f->type = below(2) ? HARK_TYPE_NONE : (hark_type)99; /* hidden, or no known value */
        f->as.u = 7;
        break;
    }
}

static void rfields(rpayload *rp, hark_payload *p, int depth)
{
    unsigned want = below(depth == 0 ? 9 : 4);
    p->fields = rp->fields + rp->nf;
    p->count = p->capacity = 0;
    while (want-- && rp->nf < POOL_FIELDS) {
        hark_field *f = &rp->fields[rp->nf++];
        p->count++;
        p->capacity++;
        rfield(rp, f, depth);
    }
    if (p->count == 0 && below(2))
        p->fields = NULL; /* a payload without fields at all */
}

static void rpayload_build(rpayload *rp)
{
    rp->nf = rp->np = 0;
    rp->nt = 0;
    rfields(rp, &rp->top, 0);
}

/* ---- recording and reading back ----------------------------------------------------- */

/* The excerpt of the JSON line at *line, which moves on to the next line. */
static void next_excerpt(char **line, const char **out, size_t *len)
{
    char *nl = strchr(*line, '\n');
    assert_non_null(nl);
    const char *at = strstr(*line, ",\"payload\":{");
    assert_true(at && at < nl);
    at += strlen(",\"payload\":{");
    assert_true(nl - at >= 2 && memcmp(nl - 2, "}}", 2) == 0);
    *out = at;
    *len = (size_t)(nl - 2 - at);
    *line = nl + 1;
}

#define EVENTS_PER_SIZE 8

/* Records `count` payloads into a recorder of `payload_bytes`, then checks each
 * excerpt of the dump against the one rendering of its payload. */
static void check_size(size_t payload_bytes, hark_payload *const *payloads, int count)
{
    hark_notifier *n;
    assert_int_equal(hark_notifier_new(&n), 0);
    hark_recorder_options o;
    hark_recorder_options_init(&o, HARK_RECORDER_OPTIONS_VERSION);
    o.max_bytes = (size_t)1 << 20;
    o.payload_bytes = payload_bytes;
    hark_recorder *r;
    assert_int_equal(hark_recorder_new(&r, &o), 0);
    assert_int_equal(hark_recorder_attach(NULL, r, n, hark_all()), 0);
    hark_topic *t;
    assert_int_equal(hark_topic_get(&t, n, "excerpt"), 0);
    char *want = malloc((size_t)count * payload_bytes);
    size_t *want_len = malloc((size_t)count * sizeof *want_len);
    assert_true(want && want_len);
    for (int i = 0; i < count; i++) {
        want_len[i] = hark_payload_json_members(want + (size_t)i * payload_bytes, payload_bytes,
                                                payloads[i], NULL);
        HARK_INSTRUMENT(t, payloads[i], {});
    }
    char *dump = dump_str(r, HARK_RECORDER_JSONL), *line = dump;
    for (int i = 0; i < count; i++) {
        const char *got;
        size_t got_len;
        next_excerpt(&line, &got, &got_len);
        if (got_len != want_len[i] || memcmp(got, want + (size_t)i * payload_bytes, got_len) != 0)
            fail_msg("payload_bytes %zu, event %d: the excerpt is\n  [%.*s]\nnot\n  [%.*s]",
                     payload_bytes, i, (int)got_len, got, (int)want_len[i],
                     want + (size_t)i * payload_bytes);
    }
    assert_non_null(strstr(line, "{\"recorder\":"));
    free(dump);
    free(want);
    free(want_len);
    assert_int_equal(hark_recorder_free(r), 0);
    assert_int_equal(hark_notifier_free(n), 0);
}

/* EVENTS_PER_SIZE payloads made by `build`, fresh for each size from the smallest
 * to 700 bytes. */
static void check_every_size(void (*build)(rpayload *))
{
    static rpayload rps[EVENTS_PER_SIZE];
    hark_payload *ps[EVENTS_PER_SIZE];
    for (size_t size = HARK_RECORDER_PAYLOAD_MIN; size <= 700; size++) {
        for (int i = 0; i < EVENTS_PER_SIZE; i++) {
            build(&rps[i]);
            ps[i] = &rps[i].top;
        }
        check_size(size, ps, EVENTS_PER_SIZE);
    }
}

static void test_random_payloads_every_size(void **state)
{
    (void)state;
    check_every_size(rpayload_build);
}

/* Payloads of strings only, the usual shape, which recording copies without the
 * walk until a string reaches the window's end: every length of key and value
 * around every size, and one in four with a field of another kind somewhere (a
 * number, a NULL string, a hidden field), which the walk copies. */
static void rstrings(rpayload *rp)
{
    rp->nf = rp->np = 0;
    rp->nt = 0;
    hark_payload *p = &rp->top;
    unsigned want = 1 + below(6);
    p->fields = rp->fields;
    p->count = p->capacity = want;
    for (unsigned i = 0; i < want; i++) {
        hark_field *f = &rp->fields[rp->nf++];
        memset(f, 0, sizeof *f);
        f->key = below(8) == 0 ? rstring(rp, 60) : rkey(rp);
        f->type = HARK_TYPE_STRING;
        f->as.s = rstring(rp, 200);
    }
    if (below(4) == 0)
        rfield(rp, &rp->fields[below(want)], 0);
}

static void test_string_payloads_every_size(void **state)
{
    (void)state;
    check_every_size(rstrings);
}

static void test_hostile_payload_every_size(void **state)
{
    (void)state;
    static hostile h;
    hostile_build(&h);
    hark_payload fitting = hostile_fitting(&h);
    hark_payload *ps[] = {&h.payload, &fitting};
    for (size_t size = HARK_RECORDER_PAYLOAD_MIN; size <= 700; size++)
        check_size(size, ps, 2);
    /* The largest excerpts: the long string is cut inside. */
    check_size(4097, ps, 2);
    check_size(HARK_RECORDER_PAYLOAD_MAX, ps, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_payloads_every_size),
        cmocka_unit_test(test_string_payloads_every_size),
        cmocka_unit_test(test_hostile_payload_every_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
