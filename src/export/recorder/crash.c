/*
 * The flight recorder (hark/recorder.h): crash dumps. A handler for SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE and SIGABRT writes a dump with the dump code every dump runs
 * (dump.c), from memory taken when crash dumps were turned on, to a descriptor
 * opened then. It calls only async-signal-safe functions (write, getpid,
 * clock_gettime, nanosleep, sigaction, raise) and atomics. Then it passes the signal
 * on: to the handler installed before it, or -- when that was the default -- it puts
 * the default back and lets the signal kill the process as it would have (a fault
 * is raised again by returning to the faulting instruction; a signal that was sent,
 * abort()'s among them, is sent again).
 * The handler runs on an alternate signal stack (altstack.c).
 *
 * A dump into a path template (hark_recorder_dump_on_crash_path()) opens its file
 * in the handler, named then: getpid() and the template's expansion
 * (hark__rec_expand_path(), which formats without snprintf()) are async-signal-safe,
 * so a forked child's crash dump goes to a file named by its own pid, with nothing
 * to redo at fork().
 */
#include "recorder_internal.h"
#include "alloc.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NCRASH ((int)(sizeof crash_signals / sizeof crash_signals[0]))

enum { CRASH_IDLE = 0, CRASH_DUMPING = 1, CRASH_DONE = 2 };

static pthread_mutex_t crash_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(hark_recorder *) crash_rec;
static struct sigaction crash_old[NCRASH]; /* what our handler passes each signal on to */
static bool crash_below[NCRASH];           /* our handler is installed, or under a later one */
static struct rdump crash_dump;            /* taken when turned on; guarded by crash_lock */
static char *crash_tmpl;                   /* the path template, or NULL: crash_dump.fd */
static char crash_path[4096];              /* the template expanded, in the handler */
static atomic_int crash_state;
static atomic_int crash_dumper; /* the thread id dumping */
static atomic_int crash_active; /* handlers using crash_rec right now */

static int index_of(int sig)
{
    for (int i = 0; i < NCRASH; i++)
        if (crash_signals[i] == sig)
            return i;
    return 0;
}

static void pass_on(int sig, siginfo_t *info, void *uctx)
{
    const struct sigaction *old = &crash_old[index_of(sig)];
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, info, uctx);
        return;
    }
    if (!(old->sa_flags & SA_SIGINFO) && old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    sigaction(sig, old, NULL);
    /* Sent, not a fault: send it again (blocked until we return). A fault happens
     * again when the instruction runs again. */
    if (!info || info->si_code <= 0 || sig == SIGABRT)
        raise(sig);
}

static void wait_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000};
    nanosleep(&ts, NULL);
}

/* Writes the crash dump: to the descriptor given, or to a file the template names
 * now. Async-signal-safe. */
static void dump_now(void)
{
    if (!crash_tmpl) {
        (void)hark__rec_dump_write(&crash_dump);
        return;
    }
    hark_recorder *r = crash_dump.rec;
    uint64_t seq = atomic_fetch_add_explicit(&r->dump_seq, 1, memory_order_relaxed) + 1;
    if (!hark__rec_expand_path(crash_path, sizeof crash_path, crash_tmpl, (long)getpid(), seq))
        return;
    int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    crash_dump.fd = fd;
    (void)hark__rec_dump_write(&crash_dump);
    close(fd);
    crash_dump.fd = -1;
}

static void on_crash(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    atomic_fetch_add_explicit(&crash_active, 1, memory_order_seq_cst);
    hark_recorder *r = atomic_load_explicit(&crash_rec, memory_order_seq_cst);
    if (r) {
        int idle = CRASH_IDLE;
        int me = (int)gettid();
        if (atomic_compare_exchange_strong_explicit(&crash_state, &idle, CRASH_DUMPING,
                                                    memory_order_acq_rel, memory_order_acquire)) {
            atomic_store_explicit(&crash_dumper, me, memory_order_relaxed);
            crash_dump.signo = sig;
            dump_now();
            atomic_store_explicit(&crash_state, CRASH_DONE, memory_order_release);
        } else {
            /* Another thread is dumping: die after it has finished (not if it is us,
             * crashing again from inside the dump). */
            while (atomic_load_explicit(&crash_state, memory_order_acquire) == CRASH_DUMPING &&
                   atomic_load_explicit(&crash_dumper, memory_order_relaxed) != me)
                wait_ms(1);
        }
    }
    atomic_fetch_sub_explicit(&crash_active, 1, memory_order_seq_cst);
    pass_on(sig, info, uctx);
    errno = saved;
}

static bool is_ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_crash;
}

/* ---- on and off -------------------------------------------------------------------- */

/* No handler uses crash_rec or crash_dump once this returns. Locking: crash_lock. */
static void quiet_locked(void)
{
    atomic_store_explicit(&crash_rec, NULL, memory_order_seq_cst);
    while (atomic_load_explicit(&crash_active, memory_order_seq_cst))
        wait_ms(1);
}

/* Puts back the handlers ours replaced, where ours is still the one installed. */
static void uninstall_locked(void)
{
    for (int i = 0; i < NCRASH; i++) {
        struct sigaction now;
        if (crash_below[i] && sigaction(crash_signals[i], NULL, &now) == 0 && is_ours(&now)) {
            sigaction(crash_signals[i], &crash_old[i], NULL);
            crash_below[i] = false;
        }
    }
}

void hark__rec_crash_off(hark_recorder *r)
{
    pthread_mutex_lock(&crash_lock);
    if (atomic_load_explicit(&crash_rec, memory_order_relaxed) == r) {
        uninstall_locked();
        quiet_locked();
        hark__rec_dump_fini(&crash_dump);
        hark__free(crash_tmpl);
        crash_tmpl = NULL;
        hark__rec_stacks_off(r);
    }
    pthread_mutex_unlock(&crash_lock);
}

static int install_locked(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NCRASH; i++) {
        if (crash_below[i])
            continue; /* ours is in place, or under a handler that passes it on to ours */
        if (sigaction(crash_signals[i], &sa, &crash_old[i]) != 0)
            return HARK_EIO;
        crash_below[i] = true;
    }
    return 0;
}

/* Turns crash dumps of `r` on, into `fd` or, when `tmpl` (a copy, taken over) is
 * not NULL, into files it names. `fn` names the caller in errors. */
static int crash_on(hark_recorder *r, int fd, char *tmpl, hark_recorder_format format,
                    const char *fn)
{
    pthread_mutex_lock(&crash_lock);
    hark_recorder *cur = atomic_load_explicit(&crash_rec, memory_order_relaxed);
    if (cur && cur != r) {
        pthread_mutex_unlock(&crash_lock);
        hark__free(tmpl);
        return hark__error(HARK_EBUSY, "%s: another recorder has crash dumps on", fn);
    }
    int rc = hark__rec_stacks_give(r);
    struct rdump fresh = {0};
    if (rc == 0 && !cur)
        rc = hark__rec_dump_init(&fresh, r);
    if (rc < 0) {
        pthread_mutex_unlock(&crash_lock);
        hark__free(tmpl);
        return hark__error(rc, "%s: no memory for the crash dump", fn);
    }
    quiet_locked(); /* no handler reads crash_dump while it changes */
    if (!cur)
        crash_dump = fresh;
    crash_dump.fd = fd;
    crash_dump.format = format;
    crash_dump.reason = "crash";
    crash_dump.spin_limited = true;
    hark__free(crash_tmpl);
    crash_tmpl = tmpl;
    atomic_store_explicit(&crash_state, CRASH_IDLE, memory_order_relaxed);
    if (install_locked() != 0) {
        int err = errno;
        uninstall_locked();
        hark__rec_dump_fini(&crash_dump);
        hark__free(crash_tmpl);
        crash_tmpl = NULL;
        pthread_mutex_unlock(&crash_lock);
        errno = err;
        return hark__error(HARK_EIO, "%s: sigaction: %s", fn, strerror(err));
    }
    /* The dump's memory is seen by whoever sees r here. */
    atomic_store_explicit(&crash_rec, r, memory_order_seq_cst);
    pthread_mutex_unlock(&crash_lock);
    hark__rec_stacks_on(r);
    /* The calling thread gets a stack too, from a descriptor of its own. */
    struct rthread *t = hark__rec_thread(r);
    if (t)
        hark__rec_stack_check(r, t);
    return 0;
}

static bool format_ok(hark_recorder_format format)
{
    return format == HARK_RECORDER_CHROME || format == HARK_RECORDER_JSONL;
}

int hark_recorder_dump_on_crash(hark_recorder *r, int fd, hark_recorder_format format)
{
    if (!r)
        return hark__error(HARK_EINVAL, "hark_recorder_dump_on_crash: the recorder is NULL");
    if (fd < 0) {
        hark__rec_crash_off(r);
        return 0;
    }
    if (!format_ok(format))
        return hark__error(HARK_EINVAL, "hark_recorder_dump_on_crash: unknown format %d",
                           (int)format);
    return crash_on(r, fd, NULL, format, "hark_recorder_dump_on_crash");
}

int hark_recorder_dump_on_crash_path(hark_recorder *r, const char *path,
                                     hark_recorder_format format)
{
    if (!r)
        return hark__error(HARK_EINVAL, "hark_recorder_dump_on_crash_path: the recorder is NULL");
    if (!path) {
        hark__rec_crash_off(r);
        return 0;
    }
    if (!hark__rec_template_ok(path))
        return hark__error(HARK_EINVAL, "hark_recorder_dump_on_crash_path: the path is %s",
                           path[0] ? "not a template: a % must be followed by p, n or %" : "empty");
    char probe[sizeof crash_path];
    if (!hark__rec_expand_path(probe, sizeof probe, path, (long)getpid(), UINT64_MAX))
        return hark__error(HARK_EINVAL, "hark_recorder_dump_on_crash_path: the path is too long");
    if (!format_ok(format))
        return hark__error(HARK_EINVAL, "hark_recorder_dump_on_crash_path: unknown format %d",
                           (int)format);
    char *copy = hark__strdup(path);
    if (!copy)
        return hark__error(HARK_ENOMEM, "hark_recorder_dump_on_crash_path: no memory");
    return crash_on(r, -1, copy, format, "hark_recorder_dump_on_crash_path");
}
