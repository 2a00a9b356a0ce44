/*
 * What a log record says about the calling thread: its kernel thread id, and the
 * log event it is handling (hark/sys/log_event.h), read inline on the write path.
 */
#include "log_ext.h"

#include <sys/syscall.h>
#include <unistd.h>

static HARK__TLS uint64_t tls_tid;

uint64_t hark_log_thread_id(void)
{
    if (!tls_tid)
        tls_tid = (uint64_t)syscall(SYS_gettid);
    return tls_tid;
}

HARK__TLS const hark_log_event *hark__tls_log_event;

const hark_log_event *hark_log_event_swap(const hark_log_event *ev)
{
    const hark_log_event *old = hark__tls_log_event;
    hark__tls_log_event = ev;
    return old;
}

const hark_log_event *hark_log_event_current(void)
{
    return hark__tls_log_event;
}
