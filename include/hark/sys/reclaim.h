/*
 * hark/sys/reclaim.h -- keep release callbacks out of a region of your own.
 *
 * An extension header: most programs never need it. Every registry change
 * (subscribe, unsubscribe, unsubscribe by name) ends by reclaiming, on the calling
 * thread, what no event can reach any more -- and that runs the release callbacks
 * of removed subscriptions, whoever made them. Code that calls the registry with a
 * lock of its own held (the namespace and log subscribers of hark/subscriber.h do)
 * brackets that region with hark_reclaim_hold() and hark_reclaim_resume(): inside
 * it the calling thread reclaims nothing, and resume does what was held back, with
 * the caller's lock already released. So a release callback never runs under that
 * lock: it may call back into the code that holds it, or take locks of its own,
 * without deadlock.
 *
 *     hark_reclaim_hold();
 *     pthread_mutex_lock(&mine);
 *     hark_unsubscribe(n, id);          // its release is held back
 *     pthread_mutex_unlock(&mine);
 *     hark_reclaim_resume();            // ...and runs here, with no lock held
 *
 * Holds nest (a per-thread counter); only the outermost resume reclaims.
 * hark_notifier_quiesce() and hark_notifier_free() inside a hold return HARK_EBUSY
 * (they would run releases under the caller's lock).
 */
#ifndef HARK_SYS_RECLAIM_H
#define HARK_SYS_RECLAIM_H

#include "hark/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Holds back reclamation (and so release callbacks) on the calling thread until the
 * matching hark_reclaim_resume(). Errors: none. Thread-safety: safe; the hold is
 * the calling thread's.
 */
HARK_API void hark_reclaim_hold(void);

/*
 * Ends one hold; the outermost one reclaims what became ripe meanwhile (running
 * release callbacks on the calling thread). A resume without a hold is ignored.
 * Errors: none. Thread-safety: safe; call it on the thread that held.
 */
HARK_API void hark_reclaim_resume(void);

#ifdef __cplusplus
}
#endif

#endif /* HARK_SYS_RECLAIM_H */
