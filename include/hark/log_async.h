/*
 * hark/log_async.h -- the asynchronous back end: a logger's lines go through a
 * bounded ring to a writer thread, which formats and writes them to the logger's
 * sink. Any logger (any sink) can be made asynchronous and back.
 *
 *     hark_log_async_options ao = HARK_LOG_ASYNC_OPTIONS_INIT;
 *     ao.policy = HARK_LOG_ASYNC_DROP;
 *     hark_logger_set_async(log, &ao);   // lines now go through a ring to a writer thread
 */
#ifndef HARK_LOG_ASYNC_H
#define HARK_LOG_ASYNC_H

#include <stddef.h>
#include <stdint.h>

#include "hark/common.h"
#include "hark/logger.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hark_log_async_policy {
    /* A full ring makes the logging thread wait for room: nothing is lost. */
    HARK_LOG_ASYNC_BLOCK = 0,
    /* A full ring drops the line and counts it; once there is room again the
     * writer logs "N lines dropped" (WARN) with the exact count. */
    HARK_LOG_ASYNC_DROP = 1
} hark_log_async_policy;

#define HARK_LOG_ASYNC_OPTIONS_VERSION 1

typedef struct hark_log_async_options {
    /* HARK_LOG_ASYNC_OPTIONS_VERSION: set by HARK_LOG_ASYNC_OPTIONS_INIT and
     * hark_log_async_options_init(); any version from 1 to it is accepted
     * (hark/common.h). */
    unsigned version;
    /* Bytes of the ring, 4 KiB to 1 GiB, rounded up to a power of two; a line with
     * a few numbers takes 32 to 64 bytes, strings add their length. Default 1 MiB. */
    size_t capacity;
    hark_log_async_policy policy;
} hark_log_async_options;

#define HARK_LOG_ASYNC_OPTIONS_INIT                                                                \
    {                                                                                              \
        HARK_LOG_ASYNC_OPTIONS_VERSION, (size_t)1 << 20, HARK_LOG_ASYNC_BLOCK                      \
    }

/*
 * Fills *opt with the defaults of HARK_LOG_ASYNC_OPTIONS_INIT as a struct of `version` has them
 * (HARK_LOG_ASYNC_OPTIONS_VERSION, or an older one: only the fields that version has are written).
 * Errors: HARK_EINVAL (NULL opt; version 0 or newer than the library, *opt then
 * untouched). Thread-safety: safe.
 */
HARK_API int hark_log_async_options_init(hark_log_async_options *opt, unsigned version);

/*
 * Makes `logger` asynchronous (`opt` not NULL) or synchronous again (NULL: every queued
 * line is written first). Asynchronous, a logging call copies its line into a bounded
 * ring shared by all threads -- with hark_log()/hark_logv(), the arguments themselves
 * and a reference to the format, parsed and copied once per logger (up to 2048 formats,
 * found by address and confirmed by content); with HARK_LOGF (hark/logf.h), one word
 * per argument by its C type and the literal format's address -- formatted later (%s
 * strings are copied; %n, %m, %ls, %lc and positional arguments are formatted at once) --
 * and a background thread formats and writes it through the logger's formatter and
 * sink. The common path takes no lock and allocates nothing (the first line with a new
 * format allocates its copy). A thread's lines keep their order; every line is written
 * whole. A line larger than half the ring is written after the lines queued before
 * it, while the calling thread waits (block policy), or dropped (drop policy).
 * The sink's callbacks and the formatter run on the writer thread (`close` excepted,
 * which runs where the sink is released): hark_logger_flush(), hark_logger_reopen(),
 * hark_logger_set_destination() and hark_logger_writes_to_tty() hand their work on
 * the sink to the writer, which does it before its next line, so none of them waits
 * for a busy ring to empty, however fast other threads fill it. hark_logger_flush()
 * and hark_logger_free() first wait for every line queued before the call; normal
 * process exit (exit(), return from main) writes what is queued. A crash (signal,
 * abort, _exit) loses what the ring holds at that moment: at most `capacity` bytes of
 * lines. hark_logger_flush() waits for the lines queued (and the drops counted) when it
 * is called, not for lines other threads queue meanwhile. A child made by fork()
 * leaves the lines queued before the fork() to the parent; its first line starts
 * its own writer thread, which writes its lines while it runs, as in any process (a
 * child that logs nothing, or calls exec(), starts none: docs/fork.md).
 * The time stamp, tags and event of a line are taken when it is logged.
 * The writer thread never waits for itself: a line that the logger's own sink or
 * formatter logs there while the ring is full is dropped and counted under either
 * policy.
 * Errors: HARK_EINVAL (NULL logger, bad policy or capacity, a `version` other than
 * HARK_LOG_ASYNC_OPTIONS_VERSION), HARK_ESTATE (already
 * asynchronous), HARK_ENOMEM (ring or thread), HARK_EBUSY (NULL `opt` from the
 * logger's own writer thread: a sink callback or formatter). Thread-safety: call it
 * while no other thread logs through `logger`.
 */
HARK_API int hark_logger_set_async(hark_logger *logger, const hark_log_async_options *opt);

/* Lines dropped so far by the drop policy, or by the writer thread's own callbacks
 * (0 for NULL or a synchronous logger). Thread-safety: safe. */
HARK_API uint64_t hark_logger_async_dropped(const hark_logger *logger);

#ifdef __cplusplus
}
#endif

#endif /* HARK_LOG_ASYNC_H */
