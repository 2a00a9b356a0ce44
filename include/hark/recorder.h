/*
 * hark/recorder.h -- a flight recorder: the last events before a crash, always on,
 * dumped on demand (part of hark::export).
 *
 * A recorder keeps the most recent events of the notifiers it is attached to in
 * memory it took once, at hark_recorder_new(), and writes them out only when asked:
 *
 *     hark_recorder *rec;
 *     hark_recorder_new(&rec, NULL);                        // 8 MiB of rings
 *     hark_recorder_attach(NULL, rec, hark_default(), hark_all());
 *     int fd = open("crash.json", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
 *     hark_recorder_dump_on_crash(rec, fd, HARK_RECORDER_CHROME);   // opt-in
 *     ... the program runs; nothing is written ...
 *     hark_recorder_dump_file(rec, "now.json", HARK_RECORDER_CHROME); // any time
 *     hark_recorder_free(rec);
 *
 * The recorder keeps the exporter contract of hark/exporter.h: new, attach, detach,
 * flush (the dumps triggers asked for) and free.
 *
 * What it keeps of each finished event that an attachment matches: its name, start
 * and finish (CLOCK_MONOTONIC nanoseconds), event id and parent id (event.h), the
 * transaction id, the thread, whether it failed (its payload carries an `exception`,
 * as hark_payload_set_exception() and a failing block leave it), and an excerpt of
 * its payload: the payload rendered as every hark output renders it
 * (hark/sys/payload_json.h), in at most `payload_bytes` bytes -- fields that do not
 * fit are left out and "_truncated":true says so. The excerpt a dump shows is, byte
 * for byte, what hark_payload_json_members(buf, payload_bytes, payload, NULL)
 * writes of the payload as it was when the event finished. Events still running are
 * not recorded: an event is recorded when it finishes.
 *
 * The excerpt is rendered when a dump is written, not when the event is recorded:
 * recording copies what that rendering needs, at most payload_bytes + 16 bytes --
 * the keys, each string up to one byte past the room the excerpt has left where it
 * starts, integers, booleans and pointers as they are, nothing past the first field
 * that cannot fit -- and a dump renders the copy with the same code. Doubles alone
 * are formatted when recorded (their shortest text needs snprintf(), which a crash
 * handler may not call).
 *
 * Recording costs the instrumenting thread no lock, no allocation and no system
 * call: each thread writes into memory of its own, taken from the recorder's. The
 * exceptions are a thread's first event in a recorder (it reads its thread id, one
 * gettid() call, and, when crash dumps are on, gives itself an alternate signal
 * stack: two sigaltstack() calls), the first chunk a forked child takes (it starts
 * the recorder's worker thread again, if there is one) and the event that fires a
 * trigger (it wakes the recorder's worker: one mutex, at most once per rate-limit
 * window).
 *
 * Memory and what is overwritten. The recorder's `max_bytes` are cut into chunks of
 * HARK_RECORDER_CHUNK_BYTES(max_bytes, payload_bytes) bytes (hark_recorder_stats
 * says how many). A thread records into one chunk at a time; when it is full, the
 * thread takes another, looking round the recorder in a fixed circular order (so the
 * chunk it takes is, in practice, the one taken longest ago) for the first chunk it
 * may take:
 *   - a chunk nobody holds (never used yet);
 *   - a chunk of a thread that has exited: what an exited thread recorded stays
 *     readable, in every dump, until its chunks are taken this way;
 *   - one of its own, once it holds its share: its oldest ones go first;
 *   - a chunk another running thread holds beyond its share (its oldest chunks but
 *     its newest `share`), whose newest event is at least `min_age_ms` old -- or of
 *     any age when the taking thread holds less than its share.
 * When none may be taken, a thread starts its own oldest chunk over (its current
 * one, when it holds no other); one that holds nothing drops the event (counted in
 * `dropped`) and tries again a millisecond later, in event time. While a dump runs,
 * no chunk it has not read yet may be taken (see "Dumps").
 * So:
 *   - every thread keeps at least its share (`thread_bytes`, rounded up to whole
 *     chunks, at least 2): a busy thread never takes it from a quiet one, as long
 *     as no more than max_bytes / thread_bytes threads record at once;
 *   - space beyond the shares goes to whoever records, and the events a thread
 *     recorded in the last `min_age_ms` are overwritten only by that thread itself;
 *   - with min_age_ms 0 the recorder as a whole keeps the most recent events,
 *     wherever they were recorded, every thread keeping its share.
 * Every event overwritten this way is counted (`overwritten`): at any time,
 * recorded == overwritten + the events a dump would hold, once no thread records.
 *
 * Dumps. hark_recorder_dump() writes, from any thread, while others go on recording,
 * a snapshot of everything held: every record complete at the time its chunk is
 * read, none torn -- a record being written then is left out. From the moment a dump
 * starts until it has read a chunk, nobody may take that chunk: a thread that needs
 * a new chunk takes one the dump has read or that holds nothing, or drops its event
 * (counted in `dropped` and `dump_dropped`). So a dump holds every thread that held
 * records when it started, running or exited, each one's records up to at least its
 * last event then, its newest ones (its share) consecutive, whatever the other
 * threads do meanwhile. Records are grouped by thread, each thread's in the order it
 * finished them. Two formats:
 *
 *   HARK_RECORDER_CHROME  the Chrome trace-event JSON of the trace file
 *                         (hark/trace.h): one "ph":"X" event per record, written
 *                         by the same code, which Perfetto's UI and
 *                         chrome://tracing open, ending with
 *                         "otherData":{"producer":"hark","wall_offset_ns":"...",
 *                         "recorder":{...}}
 *   HARK_RECORDER_JSONL   one JSON object per line, for scripts:
 *       {"name":"sql.db","start_ns":12,"end_ns":34,"pid":1,"tid":2,"id":7,
 *        "parent_id":3,"transaction_id":"...","failed":false,"payload":{"sql":"..."}}
 *     and last a line {"recorder":{...}}
 *
 * Both end with the same summary object: {"pid":P,"events":E,"recorded":R,
 * "overwritten":O,"dropped":D,"dump_dropped":H,"threads":T,"wall_offset_ns":"W",
 * "reason":"dump"} -- the events in this dump, the counters when it ended, the
 * threads whose records it read (running or exited), the wall anchor then
 * (hark_clock_wall_offset_ns(), hark/clock.h, as a string: start_ns + W is a
 * record's Unix time in nanoseconds, as hark's log lines and the trace file give it;
 * a crash dump has the kernel's offset at the crash), and why it was written
 * ("dump", "trigger", "signal" or "crash", then also "signal":N). A dump without its summary was
 * cut short (a crash dump whose handler died, a full disk).
 *
 * Triggers. hark_recorder_trigger() asks for a dump when an event takes longer than
 * a threshold, or fails, at most once per rate-limit window; the dump is written by
 * the recorder's worker thread, never the instrumenting one.
 * hark_recorder_dump_on_signal() does the same when the process receives a signal
 * (SIGUSR2, say), and hark_recorder_dump_on_crash() writes a dump from the handler of
 * a fatal signal, before the process dies of it.
 *
 * fork(). In a forked child a recorder starts empty: no records, counters at 0, every
 * chunk and thread descriptor free but the forking thread's own (kept, with its new
 * thread id); attachments, triggers and handlers stay. Dump requests the parent had
 * queued are the parent's. Path templates are expanded when a dump is written, so
 * "%p" names the child: its trigger, signal and crash dumps
 * (hark_recorder_dump_on_crash_path()) are files of its own, written by the child.
 *
 * Lifetime: free the recorder before freeing a notifier it is attached to, or at
 * least not concurrently with it.
 */
#ifndef HARK_RECORDER_H
#define HARK_RECORDER_H

#include "hark/common.h"
#include "hark/exporter.h"
#include "hark/notifications.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hark_recorder hark_recorder;

/* How a dump is written. */
typedef enum hark_recorder_format {
    HARK_RECORDER_CHROME = 1, /* Chrome trace-event JSON (Perfetto, chrome://tracing) */
    HARK_RECORDER_JSONL = 2   /* one JSON object per line */
} hark_recorder_format;

#define HARK_RECORDER_OPTIONS_VERSION 1

/* Defaults and limits of hark_recorder_options. */
#define HARK_RECORDER_BYTES_DEFAULT ((size_t)8 << 20)
#define HARK_RECORDER_BYTES_MIN ((size_t)64 << 10)
#define HARK_RECORDER_BYTES_MAX ((size_t)1 << 40)
#define HARK_RECORDER_PAYLOAD_DEFAULT 256u
#define HARK_RECORDER_PAYLOAD_MIN 32u
#define HARK_RECORDER_PAYLOAD_MAX 16384u
#define HARK_RECORDER_THREADS_DEFAULT 256u
#define HARK_RECORDER_THREADS_MAX 65536u
/* The number of threads whose share the default thread_bytes guarantees. */
#define HARK_RECORDER_SHARES_DEFAULT 16u

/* Bytes one record takes at most: a 48-byte header, the transaction id, the name and
 * the payload excerpt's copy (at most payload_bytes + 16 bytes: see "What it keeps"
 * above), rounded up to 8. */
#define HARK_RECORDER_RECORD_MAX(payload_bytes)                                                    \
    ((48u + 24u + HARK_NAME_MAX + (size_t)(payload_bytes) + 16u + 7u) & ~(size_t)7)

/*
 * A chunk's size: the smallest power of two that is at least 16 KiB, at least
 * max_bytes / 1024 and at least four of the largest records, so that a recorder
 * has at most 1024 chunks.
 */
#define HARK_RECORDER_CHUNK_BYTES(max_bytes, payload_bytes)                                        \
    hark_recorder_chunk_bytes((max_bytes), (payload_bytes))

/*
 * What an event's payload becomes in the recorder, instead of the payload itself:
 * fill `out` (an empty payload with room for HARK_RECORDER_PAYLOAD_FIELDS fields of
 * your own) with what to keep. Its keys and strings must stay valid until the
 * recorder has copied `out`, right after the call: string constants, the event's
 * own strings, or copies in `buf` (HARK_RECORDER_HOOK_BYTES bytes the recorder lends
 * for the call). A failure set with hark_payload_set_exception() makes the record a
 * failed one. Runs on the instrumenting thread, for every event recorded, with no
 * hark lock held, before the record is written: events it instruments itself are
 * recorded first. It must not dump or free the recorder. Language bindings use it
 * to keep a few keys of a payload hark cannot read itself (a Ruby Hash).
 */
#define HARK_RECORDER_PAYLOAD_FIELDS 16
#define HARK_RECORDER_HOOK_BYTES 4096
typedef void (*hark_recorder_payload_fn)(const hark_event *ev, hark_payload *out, char *buf,
                                         void *data);

typedef struct hark_recorder_options {
    unsigned version;                 /* HARK_RECORDER_OPTIONS_VERSION */
    size_t max_bytes;                 /* memory for the records, taken at hark_recorder_new();
                                         0 = HARK_RECORDER_BYTES_DEFAULT; rounded down to whole
                                         chunks */
    size_t thread_bytes;              /* each recording thread's share; 0 = max_bytes /
                                         HARK_RECORDER_SHARES_DEFAULT; rounded up to whole chunks,
                                         at least 2, at most all of them */
    uint64_t min_age_ms;              /* events younger than this are overwritten only by their
                                         own thread (see above); 0 = no such protection */
    size_t payload_bytes;             /* the payload excerpt's bytes (its members, braces aside);
                                         0 = HARK_RECORDER_PAYLOAD_DEFAULT */
    unsigned max_threads;             /* threads that may hold memory at once (running, or exited
                                         with records still held): a further thread's events are
                                         dropped; 0 = HARK_RECORDER_THREADS_DEFAULT */
    hark_recorder_payload_fn payload; /* optional: see hark_recorder_payload_fn */
    void *payload_data;
} hark_recorder_options;

#define HARK_RECORDER_OPTIONS_INIT                                                                 \
    {                                                                                              \
        HARK_RECORDER_OPTIONS_VERSION, 0, 0, 0, 0, 0, NULL, NULL                                   \
    }

/*
 * Fills *opts with the defaults of HARK_RECORDER_OPTIONS_INIT for `version` (1 to
 * HARK_RECORDER_OPTIONS_VERSION). Errors: HARK_EINVAL (NULL opts, unknown version).
 * Thread-safety: safe.
 */
HARK_API int hark_recorder_options_init(hark_recorder_options *opts, unsigned version);

/* The chunk size of a recorder made with these options (see above); 0 for sizes
 * outside their limits. Thread-safety: safe. */
HARK_API size_t hark_recorder_chunk_bytes(size_t max_bytes, size_t payload_bytes);

/*
 * What a recorder has done so far. The caller allocates it and sets `version`
 * (HARK_RECORDER_STATS_INIT); hark fills the fields a struct of that version has
 * and leaves `version` as it is. Fields are only ever appended, each append bumping
 * HARK_RECORDER_STATS_VERSION (docs/conventions.md).
 */
typedef struct hark_recorder_stats {
    unsigned version;      /* HARK_RECORDER_STATS_VERSION (or older, hark/common.h) */
    uint64_t recorded;     /* events written into the recorder */
    uint64_t overwritten;  /* recorded events since overwritten to make room */
    uint64_t dropped;      /* events not recorded: more threads than max_threads, or
                              no memory a thread could take */
    uint64_t dumps;        /* dumps written whole, whatever asked for them */
    uint64_t dump_errors;  /* dumps cut short by a write error */
    uint64_t triggered;    /* dumps asked for by triggers and signals */
    uint64_t rate_limited; /* trigger hits inside their rate-limit window: no dump */
    size_t bytes;          /* memory for records (max_bytes in whole chunks) */
    size_t chunk_bytes;    /* one chunk */
    unsigned chunks;       /* bytes / chunk_bytes */
    unsigned share_chunks; /* each thread's share, in chunks */
    unsigned threads;      /* threads holding memory now, running or exited */
    /* Version 2. */
    uint64_t dump_dropped; /* of `dropped`: events not recorded because a dump had not
                              yet read the memory their thread would have taken */
} hark_recorder_stats;

/* Version 2 added dump_dropped. Any version from 1 is accepted (hark/common.h). */
#define HARK_RECORDER_STATS_VERSION 2
#define HARK_RECORDER_STATS_INIT                                                                   \
    {                                                                                              \
        HARK_RECORDER_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0                         \
    }

/*
 * Creates a recorder and takes its memory: max_bytes for the records (taken from the
 * system as it is first written), plus a small table per possible thread. `opts`
 * may be NULL (the defaults); any version from 1 to the current one is accepted,
 * and it is copied. Nothing is recorded until hark_recorder_attach().
 * Errors: HARK_EINVAL (NULL out; a version, max_bytes, payload_bytes, thread_bytes
 * or max_threads outside its limits), HARK_ENOMEM. *out is untouched on error.
 * Thread-safety: safe.
 */
HARK_API int hark_recorder_new(hark_recorder **out, const hark_recorder_options *opts);

/*
 * Records the events of `n` that match `pattern` (copied) from now on; the
 * attachment's id goes to *out (may be NULL). An event that two attachments of one
 * recorder match is recorded once.
 * Errors: HARK_EINVAL (NULL recorder or notifier), HARK_ELIMIT (more than
 * HARK_RECORDER_ATTACH_MAX attachments and triggers), HARK_ESTATE (being freed),
 * and the errors of hark_subscribe(). Nothing changes on error.
 * Thread-safety: safe.
 */
#define HARK_RECORDER_ATTACH_MAX 16
HARK_API int hark_recorder_attach(hark_attach_id *out, hark_recorder *r, hark_notifier *n,
                                  hark_pattern pattern);

/*
 * Ends one attachment or trigger. Events in flight on other threads may still be
 * recorded (or fire the trigger) until they finish. What was recorded stays.
 * Errors: HARK_EINVAL (NULL recorder), HARK_ENOENT (not a live attachment or trigger
 * of `r`). Thread-safety: safe.
 */
HARK_API int hark_recorder_detach(hark_recorder *r, hark_attach_id id);

/*
 * Writes a dump of everything the recorder holds to `fd` (from its current offset;
 * hark never closes it), in `format`. Other threads go on recording meanwhile; see
 * "Dumps" above for what the snapshot holds. Allocates about two chunks of working
 * memory for the time of the call. Not async-signal-safe: from a signal handler use
 * hark_recorder_dump_on_crash() / hark_recorder_dump_on_signal().
 * Errors: HARK_EINVAL (NULL recorder, fd < 0, unknown format), HARK_ENOMEM, HARK_EIO
 * (a write failed: errno says why; part of the dump may have been written).
 * Thread-safety: safe, concurrently with recording, other dumps and triggers.
 */
HARK_API int hark_recorder_dump(hark_recorder *r, int fd, hark_recorder_format format);

/*
 * hark_recorder_dump() into `path`, created or truncated (mode 0644 before the
 * umask). Errors: those of hark_recorder_dump(), and HARK_EINVAL for a NULL path,
 * HARK_EIO when the file cannot be created (errno says why).
 */
HARK_API int hark_recorder_dump_file(hark_recorder *r, const char *path,
                                     hark_recorder_format format);

#define HARK_RECORDER_TRIGGER_OPTIONS_VERSION 1
#define HARK_RECORDER_TRIGGER_INTERVAL_DEFAULT 60000u /* ms */

typedef struct hark_recorder_trigger_options {
    unsigned version;            /* HARK_RECORDER_TRIGGER_OPTIONS_VERSION */
    double min_duration_ms;      /* fires for an event that took at least this long */
    bool failed_only;            /* ... and only when it failed (see above) */
    unsigned interval_ms;        /* at most one dump per interval, counted from the event
                                    that fired the last one (event times);
                                    0 = HARK_RECORDER_TRIGGER_INTERVAL_DEFAULT */
    const char *path;            /* required: where each dump goes (copied). "%p" becomes
                                    the process id, "%n" the dump's number in the
                                    recorder (1, 2, ...), "%%" a "%"; without "%n" each
                                    dump replaces the last */
    hark_recorder_format format; /* 0 = HARK_RECORDER_CHROME */
} hark_recorder_trigger_options;

#define HARK_RECORDER_TRIGGER_OPTIONS_INIT                                                         \
    {                                                                                              \
        HARK_RECORDER_TRIGGER_OPTIONS_VERSION, 0.0, false, 0, NULL, (hark_recorder_format)0        \
    }

/* Fills *opts with the defaults of HARK_RECORDER_TRIGGER_OPTIONS_INIT for `version`.
 * Errors: HARK_EINVAL (NULL opts, unknown version). Thread-safety: safe. */
HARK_API int hark_recorder_trigger_options_init(hark_recorder_trigger_options *opts,
                                                unsigned version);

/*
 * Asks for a dump whenever an event of `n` matching `pattern` that the recorder
 * records (one of its attachments matches it too) takes at least
 * opts->min_duration_ms -- and, with failed_only, failed -- unless the last dump
 * this trigger asked for was asked for less than interval_ms before (that hit is
 * counted in `rate_limited`). The dump holds the event that fired it; it is written
 * by the recorder's worker thread (started by the first trigger), never the
 * instrumenting thread, into opts->path. hark_recorder_flush() waits for the dumps
 * asked for so far. The trigger's id goes to *out (may be NULL); end it with
 * hark_recorder_detach().
 * Errors: HARK_EINVAL (NULL recorder, notifier or opts; bad version; a NULL or
 * empty path, a "%" followed by anything but p, n or %; a negative or NaN
 * min_duration_ms; an unknown format), HARK_ELIMIT, HARK_ESTATE, HARK_ENOMEM, and
 * the errors of hark_subscribe(). Nothing changes on error.
 * Thread-safety: safe.
 */
HARK_API int hark_recorder_trigger(hark_attach_id *out, hark_recorder *r, hark_notifier *n,
                                   hark_pattern pattern, const hark_recorder_trigger_options *opts);

/*
 * Waits until every dump that triggers and signals asked for before the call is
 * written. Errors: HARK_EINVAL (NULL), HARK_EBUSY (called from the worker itself,
 * e.g. a payload callback it ran), HARK_EIO (one of those dumps failed: errno says
 * why). Thread-safety: safe.
 */
HARK_API int hark_recorder_flush(hark_recorder *r);

/*
 * Crash dumps, opt-in: from now on, when the process receives SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE or SIGABRT, a handler writes a dump of `r` to `fd` (a descriptor
 * opened in advance, written from its current offset, never closed by hark), then
 * gives the signal to the handler that was installed before (hark chains to it) or,
 * when that was the default, lets the process die of it as it would have: core dumps,
 * crash reporters and the exit status (killed by signal N) are unchanged. The
 * handler runs on an alternate signal stack (so a stack overflow is dumped too),
 * calls only async-signal-safe functions (write(2), no malloc, no stdio, no
 * snprintf() -- a payload's doubles were formatted when recorded -- no lock), and
 * leaves out a record its own thread was writing when it crashed. Other threads go
 * on recording meanwhile, with the guarantees of any dump (see "Dumps"): every
 * thread's last events are in it. A second thread crashing meanwhile waits for the
 * first dump to end. `fd` is shared with any child the process forks: for a dump per
 * process, use hark_recorder_dump_on_crash_path(). The thread that calls
 * this, and every thread at its first event in `r` afterwards, gets an alternate
 * signal stack from the recorder unless it has one already.
 * One recorder of the process may have crash dumps on at a time. fd < 0 turns them
 * off again (hark_recorder_free() does too) and puts the previous handlers back
 * (those installed after hark's are left alone: they still chain to it, and it
 * then passes the signal on without dumping).
 * Errors: HARK_EINVAL (NULL recorder, unknown format), HARK_EBUSY (another
 * recorder has crash dumps on), HARK_ENOMEM, HARK_EIO (sigaction failed).
 * Thread-safety: safe; not concurrently with sigaction() of the same signals.
 */
HARK_API int hark_recorder_dump_on_crash(hark_recorder *r, int fd, hark_recorder_format format);

/*
 * hark_recorder_dump_on_crash(), into a file named when the crash happens: `path` is
 * a template, as in hark_recorder_trigger_options ("%p" the process id, "%n" the
 * dump's number in the recorder, "%%" a "%"), copied. The handler expands it and
 * creates or truncates the file (mode 0644 before the umask) with open(2), both
 * async-signal-safe, so a process that fork()s after this call gives each child a
 * crash dump of its own, "%p" being the child's pid: no descriptor is shared with
 * the parent or a sibling, and nothing is redone at fork(). A file that cannot be
 * created then means no dump; the signal goes on as it would have. A NULL path turns
 * crash dumps off, as fd < 0 does; either call replaces what the other set.
 * Errors: HARK_EINVAL (NULL recorder; a bad template, or one that may expand to more
 * than 4095 bytes; an unknown format), and those of hark_recorder_dump_on_crash().
 * Thread-safety: as hark_recorder_dump_on_crash().
 */
HARK_API int hark_recorder_dump_on_crash_path(hark_recorder *r, const char *path,
                                              hark_recorder_format format);

/*
 * Dumps on request from outside: installs a handler for `signo` (SIGUSR2 usually;
 * SIGUSR1 and the real-time signals are accepted too) that asks the recorder's
 * worker for a dump into `path` (a template, as in hark_recorder_trigger_options),
 * as `kill -USR2 <pid>` does. Nothing is installed unless this is called. The worker
 * looks for such requests every 100 ms. A NULL path removes the handler and puts
 * the previous one back. One recorder of the process may handle signals at a time.
 * Errors: HARK_EINVAL (NULL recorder, another signal, a bad template, an unknown
 * format), HARK_EBUSY (another recorder handles signals), HARK_ENOMEM, HARK_EIO
 * (sigaction failed). Thread-safety: safe.
 */
HARK_API int hark_recorder_dump_on_signal(hark_recorder *r, int signo, const char *path,
                                          hark_recorder_format format);

/*
 * Copies the counters of `r` into *out, as many as out->version has. Errors:
 * HARK_EINVAL (NULL argument; out->version 0 or newer than the library, *out then
 * untouched). Thread-safety: safe; the figures of other threads may lag by their
 * last event.
 */
HARK_API int hark_recorder_stats_get(hark_recorder *r, hark_recorder_stats *out);

/*
 * Detaches everything, turns crash and signal dumps off, waits for events in
 * flight (hark_notifier_quiesce()) and for the dumps asked for, and frees the
 * recorder: what it held is gone. NULL is accepted. Returns 0, or HARK_EBUSY when
 * called from a subscriber callback or with an event in flight on the calling
 * thread: the recorder is then freed when its last subscription is released.
 * Thread-safety: not concurrently with other calls on `r`, nor with freeing a
 * notifier it is attached to; other threads may keep instrumenting.
 */
HARK_API int hark_recorder_free(hark_recorder *r);

#ifdef __cplusplus
}
#endif

#endif /* HARK_RECORDER_H */
