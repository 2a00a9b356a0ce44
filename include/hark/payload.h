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

/*
 * The payload itself: `count` fields in use out of `capacity` (16 bytes on 64-bit
 * targets, which HARK_PAYLOAD fills with two stores).
 *
 * Passed through, never copied or replaced: the `hark_payload *` a subscriber
 * receives (as its `payload` argument, or as ev->payload of an event object) is the
 * very pointer the instrumenting call was given --
 *   - HARK_INSTRUMENT, HARK_INSTRUMENT_STATUS, HARK_INSTRUMENT_NAMED: `payload`;
 *   - hark_instrument(): `payload`, which the block gets too;
 *   - hark_handle_build(): `payload` (hark_handle_payload() returns it);
 *   - hark_publish(): `payload`; hark_publish_event(): ev->payload;
 *   - hark_start()/hark_finish(): start's for start callbacks, finish's for finish
 *     callbacks when finish gives one, else start's.
 * Where that argument is NULL, hark uses an empty payload of its own (room for the
 * failure fields only), the same pointer for the block and every subscriber of the
 * event. So code that embeds a hark_payload in a structure of its own -- a language
 * binding carrying its own objects through an event, say -- finds that structure
 * again from the pointer a subscriber receives (offsetof, "container of"), provided
 * every event reaching that subscriber was given such an embedded payload (a
 * notifier of its own ensures that).
 */
struct hark_payload {
    hark_field *fields;
    uint32_t count;
    uint32_t capacity;
};

/* Slots kept free for `exception` and `exception_object`. */
#define HARK_PAYLOAD_RESERVED 2

/*
 * Declares `hark_payload name` with room for `n` fields of your own, backed by an
 * array on the current stack. `n` must be a positive integer constant.
 */
#define HARK_PAYLOAD(name, n)                                                                      \
    hark_field name##_hark_fields[(n) + HARK_PAYLOAD_RESERVED];                                    \
    hark_payload name = {name##_hark_fields, 0, (n) + HARK_PAYLOAD_RESERVED}

/*
 * Initialises a payload over a caller-supplied array of `capacity` fields.
 * HARK_PAYLOAD_RESERVED of them are kept for failure fields.
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
 * The error field named `key` (HARK_TYPE_ERROR): its type name in *type and its
 * message in *message (either out pointer may be NULL; either value may be NULL in
 * a field built by hand). Returns 0, HARK_ENOENT when the key is missing, and
 * HARK_EINVAL when it holds another type (or `payload` or `key` is NULL); the
 * outputs are untouched on error, and hark_error_last() says why.
 * Thread-safety: as hark_payload_get().
 */
HARK_API int hark_payload_get_error(const hark_payload *payload, const char *key, const char **type,
                                    const char **message);

/*
 * The failure recorded in `payload` (hark_payload_set_exception(), or a block that
 * failed), read in one call: the `exception` field's type name and message in
 * *type and *message, and the `exception_object` pointer in *object (NULL when the
 * field is missing, as for a failure recorded by C code with no object). Any out
 * pointer may be NULL.
 *
 *     const char *type, *message;
 *     if (hark_payload_get_exception(ev->payload, &type, &message, NULL) == 0)
 *         fprintf(stderr, "%s failed: %s: %s\n", ev->name, type, message);
 *
 * Returns 0, HARK_ENOENT when no failure is recorded, HARK_EINVAL when `exception`
 * holds another type or `payload` is NULL; the outputs are untouched on error, and
 * hark_error_last() says why. Thread-safety: as hark_payload_get().
 */
HARK_API int hark_payload_get_exception(const hark_payload *payload, const char **type,
                                        const char **message, void **object);

/*
 * Removes the field named `key`, keeping the order of the others.
 * Errors: HARK_EINVAL, HARK_ENOENT. Thread-safety: as the setters.
 */
HARK_API int hark_payload_remove(hark_payload *payload, const char *key);

#ifdef __cplusplus
}
#endif

#endif /* HARK_PAYLOAD_H */
