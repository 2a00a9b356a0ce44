/*
 * The calling thread's last error (hark/error.h, error.h).
 *
 * The record itself is thread-local; its message buffer is on the heap, allocated
 * on the thread's first error and freed when the thread ends, so that the static
 * TLS block stays small (tls.h). The buffer comes from malloc() itself, not from
 * hark's allocator hooks: it belongs to the thread rather than to any hark object,
 * and a fault-injection allocator that counts live blocks must see a failing call
 * leave none behind.
 */
#include "error.h"
#include "tls.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static HARK__TLS hark_error tl_error = {0, -1, ""};
static HARK__TLS char *tl_buffer; /* HARK_ERROR_MESSAGE_MAX bytes, or NULL */

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t buffer_key;
static bool key_ok;

/* Runs on the exiting thread. An error recorded by a later destructor of the same
 * thread allocates a new buffer, which the key hands back here again. */
static void free_buffer(void *p)
{
    if (tl_buffer == p) {
        tl_buffer = NULL;
        tl_error.message = "";
    }
    free(p);
}

static void make_key(void)
{
    key_ok = pthread_key_create(&buffer_key, free_buffer) == 0;
}

static char *thread_buffer(void)
{
    if (tl_buffer)
        return tl_buffer;
    pthread_once(&key_once, make_key);
    if (!key_ok)
        return NULL;
    char *b = malloc(HARK_ERROR_MESSAGE_MAX);
    if (b && pthread_setspecific(buffer_key, b) != 0) {
        free(b);
        b = NULL;
    }
    return tl_buffer = b;
}

/* A message too long for the buffer ends with "..." after its last whole character. */
static void mark_cut(char *b)
{
    size_t n = HARK_ERROR_MESSAGE_MAX - 4;
    while (n > 0 && ((unsigned char)b[n] & 0xC0) == 0x80)
        n--;
    memcpy(b + n, "...", 4);
}

static void record(int code, int offset, const char *fmt, va_list ap) HARK_PRINTF(3, 0);
static void record(int code, int offset, const char *fmt, va_list ap)
{
    int saved = errno; /* callers report errno after the message is made */
    /* Formatted on the stack first: an argument may be the previous message. */
    char text[HARK_ERROR_MESSAGE_MAX];
    int n = vsnprintf(text, sizeof text, fmt, ap);
    if (n >= (int)sizeof text)
        mark_cut(text);
    char *b = n >= 0 ? thread_buffer() : NULL;
    if (b)
        memcpy(b, text, strlen(text) + 1);
    tl_error.code = code;
    tl_error.offset = offset;
    tl_error.message = b ? b : hark_strerror(code);
    errno = saved;
}

int hark__error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(code, -1, fmt, ap);
    va_end(ap);
    return code;
}

int hark__error_at(int code, int offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(code, offset, fmt, ap);
    va_end(ap);
    return code;
}

const hark_error *hark_error_last(void)
{
    return &tl_error;
}

void hark_error_clear(void)
{
    tl_error.code = 0;
    tl_error.offset = -1;
    tl_error.message = "";
}
