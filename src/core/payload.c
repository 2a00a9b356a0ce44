/* Typed payload fields on the caller's storage: lookups are linear, payloads are small. */
#include "hark/payload.h"
#include "error.h"

#include <string.h>

int hark_payload_init(hark_payload *payload, hark_field *fields, uint32_t capacity)
{
    if (!payload || (!fields && capacity > 0))
        return hark__error(HARK_EINVAL, "hark_payload_init: %s",
                           !payload ? "the payload is NULL" : "NULL fields with a capacity");
    payload->fields = fields;
    payload->count = 0;
    payload->capacity = capacity;
    return 0;
}

/* Keys are compared first by their first byte, without a call: most differ there. */
static bool is_failure_key(const char *key)
{
    return key && key[0] == 'e' &&
           (strcmp(key, "exception") == 0 || strcmp(key, "exception_object") == 0);
}

/* A field without a key (one built by hand) is never found, as no rendering shows it. */
static hark_field *find(const hark_payload *payload, const char *key)
{
    for (uint32_t i = 0; i < payload->count; i++) {
        const char *k = payload->fields[i].key;
        if (k && k[0] == key[0] && strcmp(k, key) == 0)
            return &payload->fields[i];
    }
    return NULL;
}

/*
 * Finds the field for `key` or claims a new slot. Ordinary fields may not take the
 * reserved slots; failure fields (`reserved_ok`) may.
 */
/* Why a field cannot be set; off the paths that set one. */
static HARK__COLD int refuse(int code, const hark_payload *payload, const char *key)
{
    if (!payload || !key)
        return hark__error(code, "payload field: %s is NULL", !payload ? "the payload" : "the key");
    if (code == HARK_ENAME)
        return hark__error(code, "payload field: the key is empty");
    return hark__error(code,
                       "payload field \"%s\": no room left (capacity %u; the last %d slots are "
                       "kept for a failure)",
                       key, (unsigned)payload->capacity, HARK_PAYLOAD_RESERVED);
}

static int slot(hark_payload *payload, const char *key, bool reserved_ok, hark_field **out)
{
    if (!payload || !key)
        return refuse(HARK_EINVAL, payload, key);
    if (!key[0])
        return refuse(HARK_ENAME, payload, key);
    hark_field *f = find(payload, key);
    if (!f) {
        /* The reserved slots are a count, not positions: failure fields recorded
         * early must not eat into the room promised for ordinary fields. */
        uint32_t used = payload->count, limit = payload->capacity;
        if (!reserved_ok) {
            for (uint32_t i = 0; i < payload->count; i++)
                if (is_failure_key(payload->fields[i].key))
                    used--;
            limit = limit > HARK_PAYLOAD_RESERVED ? limit - HARK_PAYLOAD_RESERVED : 0;
        }
        if (used >= limit || payload->count >= payload->capacity)
            return refuse(HARK_EFULL, payload, key);
        f = &payload->fields[payload->count++];
        f->key = key;
    }
    *out = f;
    return 0;
}

#define DEFINE_SETTER(fn, ctype, tag, member)                                                      \
    int fn(hark_payload *payload, const char *key, ctype value)                                    \
    {                                                                                              \
        hark_field *f;                                                                             \
        int rc = slot(payload, key, false, &f);                                                    \
        if (rc == 0) {                                                                             \
            f->type = tag;                                                                         \
            f->as.member = value;                                                                  \
        }                                                                                          \
        return rc;                                                                                 \
    }

DEFINE_SETTER(hark_payload_set_int, int64_t, HARK_TYPE_INT, i)
DEFINE_SETTER(hark_payload_set_uint, uint64_t, HARK_TYPE_UINT, u)
DEFINE_SETTER(hark_payload_set_double, double, HARK_TYPE_DOUBLE, d)
DEFINE_SETTER(hark_payload_set_bool, bool, HARK_TYPE_BOOL, b)
DEFINE_SETTER(hark_payload_set_str, const char *, HARK_TYPE_STRING, s)
DEFINE_SETTER(hark_payload_set_ptr, void *, HARK_TYPE_POINTER, p)
DEFINE_SETTER(hark_payload_set_payload, hark_payload *, HARK_TYPE_PAYLOAD, payload)

int hark_payload_set_exception(hark_payload *payload, const char *type, const char *message,
                               void *object)
{
    if (!payload || !type)
        return hark__error(HARK_EINVAL, "hark_payload_set_exception: %s is NULL",
                           !payload ? "the payload" : "the type");
    /* Both fields or neither: check room for the pair before writing either. */
    uint32_t needed =
        (find(payload, "exception") ? 0 : 1) + (find(payload, "exception_object") ? 0 : 1);
    if (payload->count + needed > payload->capacity)
        return refuse(HARK_EFULL, payload, "exception");
    hark_field *f;
    slot(payload, "exception", true, &f);
    f->type = HARK_TYPE_ERROR;
    f->as.error.type = type;
    f->as.error.message = message ? message : "";
    slot(payload, "exception_object", true, &f);
    f->type = HARK_TYPE_POINTER;
    f->as.p = object;
    return 0;
}

const hark_field *hark_payload_get(const hark_payload *payload, const char *key)
{
    if (!payload || !key)
        return NULL;
    return find(payload, key);
}

static const char *type_name(hark_type t)
{
    static const char *const names[] = {"nothing",  "an int",    "a uint",    "a double", "a bool",
                                        "a string", "a pointer", "a payload", "an error"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static int typed(const hark_payload *payload, const char *key, hark_type type,
                 const hark_field **out)
{
    if (!payload || !key)
        return hark__error(HARK_EINVAL, "payload getter: %s is NULL",
                           !payload ? "the payload" : "the key");
    const hark_field *f = find(payload, key);
    if (!f)
        return hark__error(HARK_ENOENT, "payload getter: no field \"%s\"", key);
    if (f->type != type)
        return hark__error(HARK_EINVAL, "payload getter: field \"%s\" is %s, not %s", key,
                           type_name(f->type), type_name(type));
    *out = f;
    return 0;
}

#define DEFINE_GETTER(fn, ctype, tag, member)                                                      \
    int fn(const hark_payload *payload, const char *key, ctype *out)                               \
    {                                                                                              \
        const hark_field *f;                                                                       \
        if (!out)                                                                                  \
            return hark__error(HARK_EINVAL, #fn ": out is NULL");                                  \
        int rc = typed(payload, key, tag, &f);                                                     \
        if (rc == 0)                                                                               \
            *out = f->as.member;                                                                   \
        return rc;                                                                                 \
    }

DEFINE_GETTER(hark_payload_get_int, int64_t, HARK_TYPE_INT, i)
DEFINE_GETTER(hark_payload_get_double, double, HARK_TYPE_DOUBLE, d)
DEFINE_GETTER(hark_payload_get_bool, bool, HARK_TYPE_BOOL, b)
DEFINE_GETTER(hark_payload_get_str, const char *, HARK_TYPE_STRING, s)

int hark_payload_get_error(const hark_payload *payload, const char *key, const char **type,
                           const char **message)
{
    if (!payload || !key)
        return hark__error(HARK_EINVAL, "hark_payload_get_error: %s is NULL",
                           payload ? "key" : "payload");
    const hark_field *f = find(payload, key);
    if (!f)
        return hark__error(HARK_ENOENT, "hark_payload_get_error: no field \"%s\"", key);
    if (f->type != HARK_TYPE_ERROR)
        return hark__error(HARK_EINVAL, "hark_payload_get_error: field \"%s\" is not an error",
                           key);
    if (type)
        *type = f->as.error.type;
    if (message)
        *message = f->as.error.message;
    return 0;
}

int hark_payload_get_exception(const hark_payload *payload, const char **type, const char **message,
                               void **object)
{
    if (!payload)
        return hark__error(HARK_EINVAL, "hark_payload_get_exception: payload is NULL");
    const hark_field *f = find(payload, "exception");
    if (!f)
        return hark__error(HARK_ENOENT, "hark_payload_get_exception: no failure recorded");
    if (f->type != HARK_TYPE_ERROR)
        return hark__error(HARK_EINVAL,
                           "hark_payload_get_exception: field \"exception\" is not an error");
    const hark_field *o = find(payload, "exception_object");
    if (type)
        *type = f->as.error.type;
    if (message)
        *message = f->as.error.message;
    if (object)
        *object = o && o->type == HARK_TYPE_POINTER ? o->as.p : NULL;
    return 0;
}

int hark_payload_remove(hark_payload *payload, const char *key)
{
    if (!payload || !key)
        return hark__error(HARK_EINVAL, "hark_payload_remove: %s is NULL",
                           !payload ? "the payload" : "the key");
    hark_field *f = find(payload, key);
    if (!f)
        return hark__error(HARK_ENOENT, "hark_payload_remove: no field \"%s\"", key);
    size_t index = (size_t)(f - payload->fields);
    memmove(f, f + 1, (payload->count - index - 1) * sizeof *f);
    payload->count--;
    return 0;
}
