/*
 * The flight recorder (hark/recorder.h): dumps asked for by triggers and by a
 * signal, written by the recorder's worker (worker.h), never by the thread whose
 * event fired the trigger.
 *
 * A trigger is a subscription of its own (its pattern), whose callback checks the
 * event's duration and hands the rest to record.c: the dump must hold the event,
 * so the trigger fires once the calling thread has recorded it -- at once if the
 * recorder's subscription ran first, else right after it records it (fire.c then
 * passes the rate limit and wakes the worker).
 *
 * The worker's positions (worker.h) are `queued`, every request made (triggers and
 * signals), and `handled`, every request written. A signal handler may only store
 * atomics: it adds a request and leaves the worker to find it on its next round,
 * at most 100 ms later.
 */
#include "recorder_internal.h"
#include "alloc.h"
#include "error.h"
#include "ns.h"
#include "options.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

static const size_t trigger_sizes[] = {sizeof(hark_recorder_trigger_options)};
static const hark_recorder_trigger_options trigger_defaults = HARK_RECORDER_TRIGGER_OPTIONS_INIT;
static const hark__options_type trigger_type =
    HARK__OPTIONS_TYPE("hark_recorder_trigger_options", trigger_sizes, &trigger_defaults);

/* How often the worker looks for a request a signal left. */
#define POLL_MS 100u

int hark_recorder_trigger_options_init(hark_recorder_trigger_options *opts, unsigned version)
{
    return hark__options_init(&trigger_type, opts, version);
}

void hark__rec_trigger_free(struct rtrigger *tr)
{
    hark__free(tr->path);
    hark__free(tr);
}

/* ---- the worker -------------------------------------------------------------------- */

/* The next trigger with a request, which is taken: one dump per request, so that
 * each window of a rate limit has its own. Locking: r->lock. */
static struct rtrigger *next_pending(hark_recorder *r)
{
    for (struct rtrigger *tr = r->triggers; tr; tr = tr->next) {
        uint64_t k = atomic_load_explicit(&tr->pending, memory_order_acquire);
        while (k && !atomic_compare_exchange_weak_explicit(
                        &tr->pending, &k, k - 1, memory_order_acquire, memory_order_acquire)) {
        }
        if (k)
            return tr;
    }
    return NULL;
}

static void done(hark_recorder *r, uint64_t n, int rc)
{
    if (rc < 0)
        atomic_store_explicit(&r->flush_errno, errno ? errno : EIO, memory_order_relaxed);
    /* release: a flush that sees the position sees the dump written. */
    atomic_fetch_add_explicit(&r->handled, n, memory_order_release);
}

/* One round: the signal's request, then every trigger's. Triggers live as long as
 * the recorder, so their path stays valid once the lock is dropped. */
static bool work(void *data)
{
    hark_recorder *r = data;
    bool did = false;
    if (atomic_exchange_explicit(&r->signal_pending, false, memory_order_acquire)) {
        pthread_mutex_lock(&r->lock);
        char *path = r->signal_path ? hark__strdup(r->signal_path) : NULL;
        hark_recorder_format format = r->signal_format;
        pthread_mutex_unlock(&r->lock);
        int rc = path ? hark__rec_dump_to_template(r, path, format, "signal") : 0;
        if (r->signal_path && !path) {
            errno = ENOMEM;
            rc = HARK_ENOMEM;
        }
        hark__free(path);
        done(r, 1, rc);
        did = true;
    }
    for (;;) {
        pthread_mutex_lock(&r->lock);
        struct rtrigger *tr = next_pending(r);
        pthread_mutex_unlock(&r->lock);
        if (!tr)
            break;
        done(r, 1, hark__rec_dump_to_template(r, tr->path, tr->format, "trigger"));
        did = true;
    }
    return did;
}

static uint64_t queued(void *data)
{
    return atomic_load_explicit(&((hark_recorder *)data)->queued, memory_order_seq_cst);
}

static uint64_t handled(void *data)
{
    return atomic_load_explicit(&((hark_recorder *)data)->handled, memory_order_acquire);
}

/* A forked child must not inherit the recorder's lock held by a thread it lacks. */
static void fork_prepare(void *data)
{
    pthread_mutex_lock(&((hark_recorder *)data)->lock);
}

static void fork_after(void *data)
{
    pthread_mutex_unlock(&((hark_recorder *)data)->lock);
}

static const hark__worker_ops worker_ops = {work,         queued,     handled,   NULL,
                                            fork_prepare, fork_after, fork_after};

/* Starts the worker once. */
int hark__rec_worker_start(hark_recorder *r)
{
    int rc = 0;
    pthread_mutex_lock(&r->start_lock);
    if (!r->has_worker) {
        hark__worker_timing timing = {POLL_MS, 1, POLL_MS};
        if (hark__worker_start(&r->worker, &worker_ops, r, timing) == 0)
            r->has_worker = true;
        else
            rc = HARK_ENOMEM;
    }
    pthread_mutex_unlock(&r->start_lock);
    return rc;
}

void hark__rec_worker_stop(hark_recorder *r)
{
    if (r->has_worker && hark__worker_stop(&r->worker) == 0)
        r->has_worker = false;
}

int hark_recorder_flush(hark_recorder *r)
{
    if (!r)
        return hark__error(HARK_EINVAL, "hark_recorder_flush: the recorder is NULL");
    pthread_mutex_lock(&r->start_lock);
    bool has = r->has_worker;
    pthread_mutex_unlock(&r->start_lock);
    if (!has)
        return 0;
    atomic_store_explicit(&r->flush_errno, 0, memory_order_relaxed);
    if (hark__worker_flush(&r->worker) != 0)
        return hark__error(HARK_EBUSY, "hark_recorder_flush: called from the recorder's worker");
    int err = atomic_load_explicit(&r->flush_errno, memory_order_relaxed);
    if (err) {
        hark__error(HARK_EIO, "hark_recorder_flush: a dump could not be written: %s",
                    strerror(err));
        errno = err;
        return HARK_EIO;
    }
    return 0;
}

/* ---- triggers ---------------------------------------------------------------------- */

int hark__rec_on_trigger(const char *name, double start, double finish, const char *txn,
                         hark_payload *payload, void *data)
{
    (void)name, (void)txn, (void)payload;
    struct hark__attach *a = data;
    hark_recorder *r = a->owner;
    /* acquire: pairs with the release in hark__rec_attach_add(). */
    struct rtrigger *tr = atomic_load_explicit(&r->trig[a - r->atts.slots], memory_order_acquire);
    if (!tr)
        return 0;
    int64_t end_ns = hark__s_to_ns(finish);
    if (end_ns - hark__s_to_ns(start) < tr->min_ns)
        return 0;
    hark__rec_trigger_hit(r, hark_current_event_ids().id, end_ns, tr);
    return 0;
}

struct rtrigger *hark__rec_trigger_new(hark_recorder *r, const hark_recorder_trigger_options *opts,
                                       int *rc)
{
    hark_recorder_trigger_options o;
    if ((*rc = hark__options_take(&trigger_type, &o, opts)) < 0)
        return NULL;
    if (!hark__rec_template_ok(o.path)) {
        *rc = hark__error(HARK_EINVAL, "hark_recorder_trigger: the path is %s",
                          o.path && o.path[0] ? "not a template: a % must be followed by p, n or %"
                                              : "NULL or empty");
        return NULL;
    }
    if (!(o.min_duration_ms >= 0)) {
        *rc = hark__error(HARK_EINVAL,
                          "hark_recorder_trigger: min_duration_ms is negative or not a number");
        return NULL;
    }
    if (o.format == 0)
        o.format = HARK_RECORDER_CHROME;
    if (o.format != HARK_RECORDER_CHROME && o.format != HARK_RECORDER_JSONL) {
        *rc = hark__error(HARK_EINVAL, "hark_recorder_trigger: unknown format %d", (int)o.format);
        return NULL;
    }
    if (o.interval_ms == 0)
        o.interval_ms = HARK_RECORDER_TRIGGER_INTERVAL_DEFAULT;
    struct rtrigger *tr = hark__calloc(1, sizeof *tr);
    char *path = hark__strdup(o.path);
    if (!tr || !path) {
        hark__free(tr);
        hark__free(path);
        *rc = hark__error(HARK_ENOMEM, "hark_recorder_trigger: no memory for the trigger");
        return NULL;
    }
    tr->rec = r;
    tr->path = path;
    tr->format = o.format;
    tr->failed_only = o.failed_only;
    tr->min_ns = hark__ms_to_ns(o.min_duration_ms);
    tr->interval_ns = (int64_t)o.interval_ms * 1000000;
    return tr;
}

/* ---- a signal asks for a dump ------------------------------------------------------ */

static pthread_mutex_t signal_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(hark_recorder *) signal_rec;
static atomic_int signal_active; /* handlers running now */
static int signal_signo;
static struct sigaction signal_old;

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    atomic_fetch_add_explicit(&signal_active, 1, memory_order_seq_cst);
    hark_recorder *r = atomic_load_explicit(&signal_rec, memory_order_seq_cst);
    if (r) {
        atomic_store_explicit(&r->signal_pending, true, memory_order_release);
        atomic_fetch_add_explicit(&r->queued, 1, memory_order_seq_cst);
    }
    atomic_fetch_sub_explicit(&signal_active, 1, memory_order_seq_cst);
    errno = saved;
}

/* Puts the previous handler back and waits for ours to end. Locking: signal_lock. */
static void signal_off_locked(void)
{
    sigaction(signal_signo, &signal_old, NULL);
    atomic_store_explicit(&signal_rec, NULL, memory_order_seq_cst);
    while (atomic_load_explicit(&signal_active, memory_order_seq_cst)) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

void hark__rec_signal_off(hark_recorder *r)
{
    pthread_mutex_lock(&signal_lock);
    if (atomic_load_explicit(&signal_rec, memory_order_relaxed) == r)
        signal_off_locked();
    pthread_mutex_unlock(&signal_lock);
}

static bool signal_allowed(int signo)
{
    return signo == SIGUSR1 || signo == SIGUSR2 || (signo >= SIGRTMIN && signo <= SIGRTMAX);
}

int hark_recorder_dump_on_signal(hark_recorder *r, int signo, const char *path,
                                 hark_recorder_format format)
{
    if (!r)
        return hark__error(HARK_EINVAL, "hark_recorder_dump_on_signal: the recorder is NULL");
    if (!signal_allowed(signo))
        return hark__error(HARK_EINVAL,
                           "hark_recorder_dump_on_signal: signal %d is not SIGUSR1, SIGUSR2 or a "
                           "real-time signal",
                           signo);
    if (!path) {
        hark__rec_signal_off(r);
        return 0;
    }
    if (!hark__rec_template_ok(path))
        return hark__error(HARK_EINVAL, "hark_recorder_dump_on_signal: the path is %s",
                           path[0] ? "not a template: a % must be followed by p, n or %" : "empty");
    if (format != HARK_RECORDER_CHROME && format != HARK_RECORDER_JSONL)
        return hark__error(HARK_EINVAL, "hark_recorder_dump_on_signal: unknown format %d",
                           (int)format);
    char *copy = hark__strdup(path);
    if (!copy)
        return hark__error(HARK_ENOMEM, "hark_recorder_dump_on_signal: no memory");
    pthread_mutex_lock(&signal_lock);
    hark_recorder *cur = atomic_load_explicit(&signal_rec, memory_order_relaxed);
    if (cur && cur != r) {
        pthread_mutex_unlock(&signal_lock);
        hark__free(copy);
        return hark__error(HARK_EBUSY,
                           "hark_recorder_dump_on_signal: another recorder handles the signal");
    }
    if (cur)
        signal_off_locked(); /* the same recorder again: a new signal, path or format */
    int rc = hark__rec_worker_start(r);
    if (rc == 0) {
        pthread_mutex_lock(&r->lock);
        hark__free(r->signal_path);
        r->signal_path = copy;
        r->signal_format = format;
        copy = NULL;
        pthread_mutex_unlock(&r->lock);
    }
    if (rc == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(signo, &sa, &signal_old) != 0) {
            rc = hark__error(HARK_EIO, "hark_recorder_dump_on_signal: sigaction: %s",
                             strerror(errno));
        } else {
            signal_signo = signo;
            atomic_store_explicit(&signal_rec, r, memory_order_seq_cst);
        }
    } else {
        rc = hark__error(rc, "hark_recorder_dump_on_signal: the worker thread cannot start");
    }
    pthread_mutex_unlock(&signal_lock);
    hark__free(copy);
    return rc;
}
