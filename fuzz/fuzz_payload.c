/*
 * Fuzz target: payload building and lookup.
 *
 * Input: byte 0 picks the capacity (0..17 fields); every following group of three
 * bytes is one operation (op, key index, value byte) on a payload initialised over
 * a heap array of exactly that capacity, so ASan and valgrind catch any write past
 * it. After every operation the payload is compared with a shadow model: a
 * successful set is visible through every lookup, a failed call changes nothing,
 * keys stay unique, order is kept on removal and the count never exceeds the
 * capacity. The finished payload is then delivered through an event to check that
 * subscribers see exactly the fields the model holds.
 */
#include <hark.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_payload: check failed at %s:%d: %s\n", __FILE__, __LINE__,       \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static const char *const keys[] = {"sql",
                                   "name",
                                   "rows",
                                   "cached",
                                   "",
                                   "exception",
                                   "exception_object",
                                   "a",
                                   "b",
                                   "binds",
                                   "key with spaces",
                                   "\xc3\xa9t\xc3\xa9"};
#define NKEYS (sizeof keys / sizeof keys[0])
static const char *const strs[] = {"SELECT 1", "", "\x1b[31mred\x1b[0m", "\xff\xfe"};

static int same_field(const hark_field *a, const hark_field *b)
{
    if (strcmp(a->key, b->key) != 0 || a->type != b->type)
        return 0;
    switch (a->type) {
    case HARK_TYPE_INT:
        return a->as.i == b->as.i;
    case HARK_TYPE_UINT:
        return a->as.u == b->as.u;
    case HARK_TYPE_DOUBLE:
        return memcmp(&a->as.d, &b->as.d, sizeof a->as.d) == 0;
    case HARK_TYPE_BOOL:
        return a->as.b == b->as.b;
    case HARK_TYPE_STRING:
        return a->as.s == b->as.s;
    case HARK_TYPE_POINTER:
        return a->as.p == b->as.p;
    case HARK_TYPE_PAYLOAD:
        return a->as.payload == b->as.payload;
    case HARK_TYPE_ERROR:
        return a->as.error.type == b->as.error.type && a->as.error.message == b->as.error.message;
    default:
        return 0;
    }
}

/* The payload must hold exactly the model's fields, in the model's order. */
static void check_against(const hark_payload *p, const hark_field *model, uint32_t count)
{
    CHECK(p->count == count);
    CHECK(p->count <= p->capacity);
    for (uint32_t i = 0; i < count; i++) {
        CHECK(same_field(&p->fields[i], &model[i]));
        const hark_field *f = hark_payload_get(p, model[i].key);
        CHECK(f == &p->fields[i]);
    }
}

static int model_find(const hark_field *model, uint32_t count, const char *key)
{
    for (uint32_t i = 0; i < count; i++)
        if (strcmp(model[i].key, key) == 0)
            return (int)i;
    return -1;
}

static int deliver_cb(hark_event *ev, void *data)
{
    const hark_payload *expect = data;
    CHECK(ev->payload == expect);
    for (uint32_t i = 0; i < expect->count; i++)
        CHECK(hark_payload_get(ev->payload, expect->fields[i].key) == &expect->fields[i]);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint32_t cap = data[0] % 18;
    data++, size--;

    hark_field *fields = malloc(sizeof(hark_field) * (cap ? cap : 1));
    CHECK(fields != NULL);
    hark_payload p;
    CHECK(hark_payload_init(&p, cap ? fields : NULL, cap) == 0);
    CHECK(p.count == 0 && p.capacity == cap);

    hark_field model[18];
    uint32_t mcount = 0;
    hark_payload nested = {NULL, 0, 0};
    static int anchor;

    for (size_t at = 0; at + 3 <= size; at += 3) {
        unsigned op = data[at] % 14;
        const char *key = keys[data[at + 1] % NKEYS];
        uint8_t v = data[at + 2];
        hark_field nf;
        memset(&nf, 0, sizeof nf);
        nf.key = key;
        int rc;
        switch (op) {
        case 0:
            rc = hark_payload_set_int(&p, key, (int64_t)v - 128);
            nf.type = HARK_TYPE_INT;
            nf.as.i = (int64_t)v - 128;
            break;
        case 1:
            rc = hark_payload_set_uint(&p, key, (uint64_t)v << 56);
            nf.type = HARK_TYPE_UINT;
            nf.as.u = (uint64_t)v << 56;
            break;
        case 2:
            rc = hark_payload_set_double(&p, key, v / 7.0);
            nf.type = HARK_TYPE_DOUBLE;
            nf.as.d = v / 7.0;
            break;
        case 3:
            rc = hark_payload_set_bool(&p, key, v & 1);
            nf.type = HARK_TYPE_BOOL;
            nf.as.b = v & 1;
            break;
        case 4: {
            const char *s = (v & 4) ? NULL : strs[v % 4];
            rc = hark_payload_set_str(&p, key, s);
            nf.type = HARK_TYPE_STRING;
            nf.as.s = s;
            break;
        }
        case 5:
            rc = hark_payload_set_ptr(&p, key, (v & 1) ? &anchor : NULL);
            nf.type = HARK_TYPE_POINTER;
            nf.as.p = (v & 1) ? &anchor : NULL;
            break;
        case 6:
            rc = hark_payload_set_payload(&p, key, (v & 1) ? &p : &nested);
            nf.type = HARK_TYPE_PAYLOAD;
            nf.as.payload = (v & 1) ? &p : &nested;
            break;
        default:
            rc = 1;
            break;
        }
        if (op <= 6) {
            int idx = model_find(model, mcount, key);
            if (key[0] == '\0') {
                CHECK(rc == HARK_ENAME);
            } else if (idx >= 0) {
                CHECK(rc == 0); /* replacing never needs room */
                model[idx] = nf;
            } else if (rc == 0) {
                CHECK(mcount < cap);
                model[mcount++] = nf;
            } else {
                CHECK(rc == HARK_EFULL);
                /* Full means: only the reserved slots (or none) are left. */
                CHECK(mcount + HARK_PAYLOAD_RESERVED >= cap);
            }
            check_against(&p, model, mcount);
            continue;
        }
        switch (op) {
        case 7: { /* exception: two fields, may use the reserved slots */
            const char *type = (v & 1) ? "IOError" : "SQLiteError";
            const char *msg = (v & 2) ? NULL : "no such table: nope";
            void *obj = (v & 4) ? &anchor : NULL;
            rc = hark_payload_set_exception(&p, type, msg, obj);
            int ie = model_find(model, mcount, "exception");
            int io = model_find(model, mcount, "exception_object");
            uint32_t need = (ie < 0) + (io < 0);
            if (rc == 0) {
                CHECK(mcount + need <= cap);
                hark_field e, o;
                memset(&e, 0, sizeof e);
                memset(&o, 0, sizeof o);
                e.key = "exception", e.type = HARK_TYPE_ERROR, e.as.error.type = type,
                e.as.error.message = msg;
                o.key = "exception_object", o.type = HARK_TYPE_POINTER, o.as.p = obj;
                /* Compare by lookup: the library names its own key strings. */
                const hark_field *fe = hark_payload_get(&p, "exception");
                const hark_field *fo = hark_payload_get(&p, "exception_object");
                CHECK(fe && fe->type == HARK_TYPE_ERROR && fe->as.error.type == type);
                CHECK(fo && fo->type == HARK_TYPE_POINTER && fo->as.p == obj);
                if (ie >= 0)
                    model[ie] = *fe;
                else
                    model[mcount++] = *fe;
                io = model_find(model, mcount, "exception_object");
                if (io >= 0)
                    model[io] = *fo;
                else
                    model[mcount++] = *fo;
                (void)e, (void)o;
            } else {
                CHECK(rc == HARK_EFULL);
                CHECK(mcount + need > cap);
            }
            check_against(&p, model, mcount);
            break;
        }
        case 8: { /* remove */
            rc = hark_payload_remove(&p, key);
            int idx = model_find(model, mcount, key);
            if (idx < 0) {
                CHECK(rc == HARK_ENOENT || (key[0] == '\0' && rc == HARK_ENAME) ||
                      (key[0] == '\0' && rc == HARK_EINVAL));
            } else {
                CHECK(rc == 0);
                memmove(&model[idx], &model[idx + 1],
                        sizeof(hark_field) * (mcount - (uint32_t)idx - 1));
                mcount--;
            }
            check_against(&p, model, mcount);
            break;
        }
        case 9: { /* typed lookups */
            int idx = model_find(model, mcount, key);
            int64_t i64 = 42;
            double d = 4.5;
            bool b = true;
            const char *s = "untouched";
            int ri = hark_payload_get_int(&p, key, &i64);
            int rd = hark_payload_get_double(&p, key, &d);
            int rb = hark_payload_get_bool(&p, key, &b);
            int rs = hark_payload_get_str(&p, key, &s);
            if (idx < 0) {
                CHECK(hark_payload_get(&p, key) == NULL);
                CHECK(ri == HARK_ENOENT && rd == HARK_ENOENT && rb == HARK_ENOENT &&
                      rs == HARK_ENOENT);
                CHECK(i64 == 42 && d == 4.5 && b && strcmp(s, "untouched") == 0);
            } else {
                hark_type t = model[idx].type;
                CHECK((ri == 0) == (t == HARK_TYPE_INT));
                CHECK((rd == 0) == (t == HARK_TYPE_DOUBLE));
                CHECK((rb == 0) == (t == HARK_TYPE_BOOL));
                CHECK((rs == 0) == (t == HARK_TYPE_STRING));
                if (ri == 0)
                    CHECK(i64 == model[idx].as.i);
                else
                    CHECK(ri == HARK_EINVAL && i64 == 42);
                if (rd == 0)
                    CHECK(memcmp(&d, &model[idx].as.d, sizeof d) == 0);
                else
                    CHECK(rd == HARK_EINVAL && d == 4.5);
                if (rb == 0)
                    CHECK(b == model[idx].as.b);
                else
                    CHECK(rb == HARK_EINVAL && b);
                if (rs == 0)
                    CHECK(s == model[idx].as.s);
                else
                    CHECK(rs == HARK_EINVAL);
            }
            break;
        }
        case 10: /* NULL arguments never change anything */
            CHECK(hark_payload_set_int(NULL, key, 1) == HARK_EINVAL);
            CHECK(hark_payload_set_int(&p, NULL, 1) == HARK_EINVAL);
            CHECK(hark_payload_get(NULL, key) == NULL);
            CHECK(hark_payload_get(&p, NULL) == NULL);
            CHECK(hark_payload_remove(&p, NULL) == HARK_EINVAL);
            CHECK(hark_payload_set_exception(&p, NULL, "m", NULL) == HARK_EINVAL);
            check_against(&p, model, mcount);
            break;
        default:
            break;
        }
    }

    /* Subscribers see the caller's very payload, with every field in place. */
    hark_notifier *n = NULL;
    hark_topic *t = NULL;
    CHECK(hark_notifier_new(&n) == 0);
    CHECK(hark_topic_get(&t, n, "fuzz.payload") == 0);
    CHECK(hark_subscribe_event(NULL, n, hark_exact("fuzz.payload"), deliver_cb, &p) == 0);
    CHECK(hark_instrument(t, &p, NULL, NULL, NULL) == 0);
    check_against(&p, model, mcount);
    CHECK(hark_notifier_free(n) == 0);
    free(fields);
    return 0;
}
