/*
 * Internal: the metrics endpoint's parts beside the serving itself (http.c) --
 * who may in (http_access.c) and the deadline of slow clients (http_slow.c).
 */
#ifndef HARK_EXPORT_HTTP_INTERNAL_H
#define HARK_EXPORT_HTTP_INTERNAL_H

#include "server_config.h"
#include "worker.h"

#include <microhttpd.h>
#include <stdint.h>

#if MHD_VERSION < 0x00097002
typedef int hark__mhd_result;
#else
typedef enum MHD_Result hark__mhd_result;
#endif

/*
 * Checks the request's client certificate and basic auth credentials against
 * `cfg`. Returns true when the request may be answered; false when a refusal has
 * been queued on `c` (403 for a client certificate missing or not verified, 401
 * with a basic auth challenge for credentials missing or wrong) -- *result is then
 * what the access handler returns.
 */
bool hark__http_admit(const hark__server_config *cfg, struct MHD_Connection *c,
                      hark__mhd_result *result);

/*
 * Slow clients: every connection is tracked from the moment it is accepted until
 * it closes (libmicrohttpd's connection notifications); one that has not delivered
 * a whole request within the timeout of connecting (or of its previous request's
 * end) has its socket shut down, whatever trickle of bytes it sends. A worker
 * thread (util's worker.h) looks every quarter of the timeout (at most a second).
 */
typedef struct hark__slow_conn hark__slow_conn;
typedef struct hark__slow {
    pthread_mutex_t lock; /* the list; held while a connection's socket is shut down */
    hark__slow_conn *head;
    int64_t timeout_ns;
    struct hark__worker worker;
} hark__slow;

/* Starts the sweeping worker; 0 or HARK_ENOMEM. */
int hark__slow_start(hark__slow *s, unsigned timeout_s);
/* Stops it; after the server has stopped (every connection closed). */
void hark__slow_stop(hark__slow *s);
/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION, with `cls` the hark__slow. */
void hark__slow_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code);
/* The connection delivered a request (true) or finished answering one (false). */
void hark__slow_request(hark__slow *s, struct MHD_Connection *c, bool started);

#endif /* HARK_EXPORT_HTTP_INTERNAL_H */
