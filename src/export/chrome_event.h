/*
 * Internal to the export layer: one Chrome trace event ("ph":"X"), as the trace
 * file (hark/trace.h) and the flight recorder's dumps (hark/recorder.h) write it.
 * One writer, so that both open alike in Perfetto and pass the same checker.
 * Async-signal-safe into a fixed buffer: it only copies, escapes and formats
 * integers.
 */
#ifndef HARK_CHROME_EVENT_H
#define HARK_CHROME_EVENT_H

#include "hark/common.h"
#include "buf.h"

#include <stddef.h>
#include <stdint.h>

typedef struct hark__chrome_event {
    const char *name; /* name_len bytes, not NUL-terminated */
    size_t name_len;
    int64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
    long pid;
    int tid;
    uint64_t id, parent;
    const char *args; /* the members of "args" (JSON, braces aside) */
    size_t args_len;
} hark__chrome_event;

/* Bytes one event takes at most, its args aside: the name escaped twice (name and
 * category, 6 bytes per byte at worst) and the fixed fields. */
#define HARK__CHROME_EVENT_MAX (12 * HARK_NAME_MAX + 256)

/*
 * Writes {"name":...,"cat":...,"ph":"X","ts":...,"dur":...,"pid":...,"tid":...,
 * "id":...,"parent_id":...,"args":{...}} into `b`. "cat" is the name after its first
 * dot ("hark" without one); ts and dur are microseconds with nanosecond digits.
 */
void hark__chrome_event_write(hark__buf *b, const hark__chrome_event *e);

#endif /* HARK_CHROME_EVENT_H */
