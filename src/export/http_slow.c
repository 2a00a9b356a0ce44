/*
 * The deadline of slow clients on the metrics endpoint (http_internal.h).
 * libmicrohttpd closes a connection that stays silent for its timeout, but one
 * that sends a byte now and then keeps it open as long as it likes; thousands of
 * those would hold every connection the endpoint allows. Here each connection has
 * until the same timeout to deliver a whole request; past it, its socket is shut
 * down (shutdown(2): libmicrohttpd then reads the end of the stream and closes the
 * connection as it closes any other).
 *
 * The sweep runs on a worker thread, beside libmicrohttpd's. It is safe because
 * libmicrohttpd (0.9.75 as 0.9.77) tells a connection is closed before it closes
 * its socket: the notification waits for `lock`, so a connection found in the list
 * still has its socket, and shutting it down never touches another file.
 */
#include "http_internal.h"
#include "alloc.h"

#include <sys/socket.h>
#include <time.h>

struct hark__slow_conn {
    struct MHD_Connection *conn;
    int64_t since_ns; /* accepted, or its previous request answered */
    bool in_request;  /* a request was delivered and is being answered */
    bool shut;        /* its socket was shut down */
    hark__slow_conn *prev, *next;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool sweep(void *data)
{
    hark__slow *s = data;
    int64_t now = now_ns();
    pthread_mutex_lock(&s->lock);
    for (hark__slow_conn *t = s->head; t; t = t->next) {
        if (t->in_request || t->shut || now - t->since_ns < s->timeout_ns)
            continue;
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(t->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (ci)
            shutdown(ci->connect_fd, SHUT_RDWR);
        t->shut = true;
    }
    pthread_mutex_unlock(&s->lock);
    return false; /* nothing queued: the worker naps until the next look */
}

static uint64_t nothing(void *data)
{
    (void)data;
    return 0;
}

static const hark__worker_ops sweeper = {.work = sweep, .queued = nothing, .handled = nothing};

int hark__slow_start(hark__slow *s, unsigned timeout_s)
{
    s->head = NULL;
    s->timeout_ns = (int64_t)timeout_s * 1000000000;
    unsigned look_ms = timeout_s * 250;
    if (look_ms > 1000)
        look_ms = 1000;
    if (pthread_mutex_init(&s->lock, NULL) != 0)
        return HARK_ENOMEM;
    int rc =
        hark__worker_start(&s->worker, &sweeper, s, (hark__worker_timing){look_ms, 1, look_ms});
    if (rc)
        pthread_mutex_destroy(&s->lock);
    return rc;
}

void hark__slow_stop(hark__slow *s)
{
    hark__worker_stop(&s->worker);
    pthread_mutex_destroy(&s->lock);
}

void hark__slow_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code)
{
    hark__slow *s = cls;
    hark__slow_conn *t = *socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        t = hark__calloc(1, sizeof *t);
        if (!t)
            return; /* untracked: libmicrohttpd's inactivity timeout still holds */
        t->conn = c;
        t->since_ns = now_ns();
        pthread_mutex_lock(&s->lock);
        t->next = s->head;
        if (s->head)
            s->head->prev = t;
        s->head = t;
        pthread_mutex_unlock(&s->lock);
        *socket_context = t;
    } else if (t) {
        pthread_mutex_lock(&s->lock);
        if (t->prev)
            t->prev->next = t->next;
        else
            s->head = t->next;
        if (t->next)
            t->next->prev = t->prev;
        pthread_mutex_unlock(&s->lock);
        hark__free(t);
        *socket_context = NULL;
    }
}

void hark__slow_request(hark__slow *s, struct MHD_Connection *c, bool started)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    hark__slow_conn *t = ci ? ci->socket_context : NULL;
    if (!t)
        return;
    pthread_mutex_lock(&s->lock);
    t->in_request = started;
    if (!started)
        t->since_ns = now_ns();
    pthread_mutex_unlock(&s->lock);
}
