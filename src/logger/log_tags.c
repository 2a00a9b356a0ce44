/*
 * Thread-local tags (Rails' TaggedLogging): a per-thread stack of copied strings,
 * allocated on the thread's first push and freed when the thread exits.
 */
#include "log_ext.h"
#include "alloc.h"
#include "error.h"

#include <pthread.h>
#include <string.h>

/* One pointer per thread; the stack itself is on the heap, so the static TLS block
 * a dlopen()ed library may use stays small. */
HARK__TLS struct hark__tag_stack *hark__tls_tags;

static pthread_key_t tags_key;
static pthread_once_t tags_once = PTHREAD_ONCE_INIT;
static bool tags_key_ok;

/* Runs on the exiting thread: a line logged by a later thread-exit destructor then
 * finds no tags rather than freed ones. */
static void free_tags(void *p)
{
    if (hark__tls_tags == p)
        hark__tls_tags = NULL;
    hark__free(p);
}

static void make_key(void)
{
    tags_key_ok = pthread_key_create(&tags_key, free_tags) == 0;
}

int hark_log_tags_push(const char *tag)
{
    if (!tag || !tag[0])
        return hark__error(HARK_EINVAL, "hark_log_tags_push: the tag is %s",
                           !tag ? "NULL" : "empty");
    struct hark__tag_stack *t = hark__tls_tags;
    if (!t) {
        pthread_once(&tags_once, make_key);
        if (!tags_key_ok)
            return hark__error(HARK_ENOMEM, "hark_log_tags_push: no thread-exit key for the tags");
        t = hark__calloc(1, sizeof *t);
        if (!t)
            return HARK_ENOMEM;
        if (pthread_setspecific(tags_key, t) != 0) {
            hark__free(t);
            return hark__error(HARK_ENOMEM, "hark_log_tags_push: no thread-specific slot");
        }
        hark__tls_tags = t;
    }
    if (t->count == HARK_LOG_TAGS_MAX)
        return hark__error(HARK_ELIMIT,
                           "hark_log_tags_push: %d tags already on this thread (HARK_LOG_TAGS_MAX)",
                           HARK_LOG_TAGS_MAX);
    char *dst = t->text[t->count];
    size_t n = strnlen(tag, HARK_LOG_TAG_LEN);
    /* Cut at a character boundary, not inside a UTF-8 sequence. */
    if (n == HARK_LOG_TAG_LEN && tag[n] != '\0')
        while (n > 0 && ((unsigned char)tag[n] & 0xC0) == 0x80)
            n--;
    memcpy(dst, tag, n);
    dst[n] = '\0';
    t->ptrs[t->count] = dst;
    t->count++;
    return 0;
}

int hark_log_tags_pop(size_t count)
{
    struct hark__tag_stack *t = hark__tls_tags;
    size_t have = t ? t->count : 0;
    if (count > have)
        return hark__error(HARK_ESTATE, "hark_log_tags_pop: %zu tags asked, %zu pushed", count,
                           have);
    if (t)
        t->count -= count;
    return 0;
}

size_t hark_log_tags_count(void)
{
    return hark__tls_tags ? hark__tls_tags->count : 0;
}

size_t hark_log_tags(const char *const **tags)
{
    const char *const *dummy;
    return hark__log_tags_get(tags ? tags : &dummy);
}

int hark_log_tagged(const char *tag, int (*body)(void *data), void *data)
{
    if (!body)
        return hark__error(HARK_EINVAL, "hark_log_tagged: the body is NULL");
    int rc = hark_log_tags_push(tag);
    if (rc != 0)
        return rc;
    rc = body(data);
    (void)hark_log_tags_pop(1);
    return rc;
}
