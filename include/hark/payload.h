/*
 * hark/payload.h -- typed key/value fields that travel with an event.
 *
 * A payload is a small array of fields that the instrumenting code owns, usually
 * on its own stack. Every subscriber of an event receives a pointer to the very
 * same payload, and the instrumented block may change it while it runs; nothing is
 * copied. Keys and string values are borrowed: they must stay valid until the
 * event has finished (string literals are the usual choice).
 *
 *     HARK_PAYLOAD(p, 4);                       // room for 4 fields
 *     hark_payload_set_str(&p, "sql", "SELECT 1");
 *     hark_payload_set_int(&p, "rows", 0);
 *
 * Two extra slots are always reserved so that a failing block can record the
 * `exception` and `exception_object` fields (see hark_payload_set_exception()).
 *
 * Thread-safety: a payload is a plain value; synchronise concurrent writers yourself.
 * Subscribers run on the instrumenting thread and may read and write it freely.
 */
#ifndef HARK_PAYLOAD_H
#define HARK_PAYLOAD_H

#include "hark/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hark_type {
    HARK_TYPE_NONE = 0, /* an unset field (never returned by lookups) */
    HARK_TYPE_INT,      /* int64_t */
    HARK_TYPE_UINT,     /* uint64_t */
    HARK_TYPE_DOUBLE,   /* double */
    HARK_TYPE_BOOL,     /* bool */
    HARK_TYPE_STRING,   /* const char *, borrowed, may be NULL */
    HARK_TYPE_POINTER,  /* void *, borrowed, never dereferenced by hark */
    HARK_TYPE_PAYLOAD,  /* a nested struct hark_payload *, borrowed */
    HARK_TYPE_ERROR     /* a failure: error type name and message (the `exception` field) */
} hark_type;

typedef struct hark_payload hark_payload;

/* One field. Read `type` first, then the matching member of `as`. */
typedef struct hark_field {
    const char *key;
    hark_type type;
    union {
        int64_t i;
        uint64_t u;
        double d;
        bool b;
        const char *s;
        void *p;
        hark_payload *payload;
        struct {
            const char *type;    /* e.g. "SQLiteError" */
            const char *message; /* e.g. "no such table: nope" */
        } error;
    } as;
} hark_field;

/* The payload itself: `count` fields in use out of `capacity`, and one opaque pointer. */
struct hark_payload {
    hark_field *fields;
    uint32_t count;
    uint32_t capacity;
    void *opaque; /* the caller's own, never dereferenced by hark (hark_payload_set_opaque) */
};

/* Slots kept free for `exception` and `exception_object`. */
#define HARK_PAYLOAD_RESERVED 2

/*
 * Declares `hark_payload name` with room for `n` fields of your own, backed by an
 * array on the current stack. `n` must be a positive integer constant.
 */
#define HARK_PAYLOAD(name, n)                                                                      \
    hark_field name##_hark_fields[(n) + HARK_PAYLOAD_RESERVED];                                    \
    hark_payload name = {name##_hark_fields, 0, (n) + HARK_PAYLOAD_RESERVED, NULL}

/*
 * Initialises a payload over a caller-supplied array of `capacity` fields, with no
 * opaque pointer. HARK_PAYLOAD_RESERVED of them are kept for failure fields.
 * Errors: HARK_EINVAL if `payload` is NULL, or `fields` is NULL with capacity > 0.
 * Thread-safety: operates on the caller's payload only.
 */
HARK_API int hark_payload_init(hark_payload *payload, hark_field *fields, uint32_t capacity);

/*
 * Set a field: replaces the value (and type) of an existing field with the same key,
 * or appends a new one. Keys are compared with strcmp and borrowed.
 * Errors: HARK_EINVAL for a NULL payload or key, HARK_ENAME for an empty key,
 * HARK_EFULL when a new field would take one of the reserved slots. On error the
 * payload is unchanged. Thread-safety: the caller's payload only; not concurrently
 * with other writers or readers of the same payload.
 */
HARK_API int hark_payload_set_int(hark_payload *payload, const char *key, int64_t value);
HARK_API int hark_payload_set_uint(hark_payload *payload, const char *key, uint64_t value);
HARK_API int hark_payload_set_double(hark_payload *payload, const char *key, double value);
HARK_API int hark_payload_set_bool(hark_payload *payload, const char *key, bool value);
HARK_API int hark_payload_set_str(hark_payload *payload, const char *key, const char *value);
HARK_API int hark_payload_set_ptr(hark_payload *payload, const char *key, void *value);
HARK_API int hark_payload_set_payload(hark_payload *payload, const char *key, hark_payload *value);

/*
 * Records a failure exactly as Rails does for an exception raised in the block:
 * `exception` becomes a HARK_TYPE_ERROR field (type name and message, both
 * borrowed) and `exception_object` a HARK_TYPE_POINTER field holding `object`
 * (may be NULL). Uses the reserved slots if needed.
 * Errors: HARK_EINVAL for a NULL payload or type, HARK_EFULL if even the reserved
 * slots are taken. Thread-safety: as the setters above.
 */
HARK_API int hark_payload_set_exception(hark_payload *payload, const char *type,
                                        const char *message, void *object);

/*
 * Returns the field named `key`, or NULL when there is none (or an argument is NULL).
 * The pointer is valid until the payload is next changed.
 * Thread-safety: safe alongside other readers, not alongside a writer.
 */
HARK_API const hark_field *hark_payload_get(const hark_payload *payload, const char *key);

/*
 * Typed lookups: store the value in *out and return 0, or return HARK_ENOENT when
 * the key is missing and HARK_EINVAL when it holds another type (or an argument is
 * NULL). *out is untouched on error. Thread-safety: as hark_payload_get().
 */
HARK_API int hark_payload_get_int(const hark_payload *payload, const char *key, int64_t *out);
HARK_API int hark_payload_get_double(const hark_payload *payload, const char *key, double *out);
HARK_API int hark_payload_get_bool(const hark_payload *payload, const char *key, bool *out);
HARK_API int hark_payload_get_str(const hark_payload *payload, const char *key, const char **out);

/*
 * Attaches one opaque pointer to the payload, replacing any earlier one (NULL
 * detaches it). hark never reads through it: it travels with the payload to every
 * subscriber, which gets it back with hark_payload_opaque(). This is how a binding
 * carries a payload of its own language (a Ruby Hash, say) through an event; the
 * pointed-to object is borrowed and must outlive the event. Fields and the opaque
 * pointer are independent. Errors: HARK_EINVAL for a NULL payload (nothing changed).
 * Thread-safety: as the setters above.
 */
HARK_API int hark_payload_set_opaque(hark_payload *payload, void *opaque);

/*
 * The payload's opaque pointer, or NULL when none is attached (or `payload` is NULL).
 * Thread-safety: as hark_payload_get().
 */
HARK_API void *hark_payload_opaque(const hark_payload *payload);

/*
 * Removes the field named `key`, keeping the order of the others.
 * Errors: HARK_EINVAL, HARK_ENOENT. Thread-safety: as the setters.
 */
HARK_API int hark_payload_remove(hark_payload *payload, const char *key);

#ifdef __cplusplus
}
#endif

#endif /* HARK_PAYLOAD_H */
