/*
 * Internal: OTLP/HTTP over libcurl (transport.c). One connection, used by the
 * exporter's worker alone: a POST per request body, gzip when configured, and
 * OTLP's retry rules, cut short by the shutdown's deadline.
 */
#ifndef HARK_OTLP_TRANSPORT_H
#define HARK_OTLP_TRANSPORT_H

#include "config.h"
#include "wire.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct hark__otlp_transport {
    const hark__otlp_cfg *cfg; /* borrowed: the exporter's */
    void *curl;
    void *headers[SIG_COUNT]; /* curl_slist per signal */
    hark__wire gz;            /* the compressed body */
    /* The shutdown's deadline, which cuts retries short: dlock guards it, dwake
     * interrupts a backoff wait. */
    pthread_mutex_t dlock;
    pthread_cond_t dwake;
    int64_t deadline_ns; /* CLOCK_MONOTONIC; 0: none */
    /* Why the last request failed, under dlock too. */
    hark_otlp_failure last_failure;
    char last_error[HARK_OTLP_ERROR_MAX];
    atomic_uint_least64_t requests, retries, tls_failures;
    atomic_long last_status; /* of the last answer; 0: none, or no connection */
} hark__otlp_transport;

/* Returns false when libcurl could not be set up (nothing to free then). */
bool hark__otlp_transport_init(hark__otlp_transport *t, const hark__otlp_cfg *cfg);
void hark__otlp_transport_free(hark__otlp_transport *t);
/* In a forked child: a connection and a deadline lock of its own. */
void hark__otlp_transport_after_fork(hark__otlp_transport *t);
/* From now on, retries and requests in progress end at `deadline_ns`
 * (CLOCK_MONOTONIC). Thread-safety: safe. */
void hark__otlp_transport_deadline(hark__otlp_transport *t, int64_t deadline_ns);
/* The counters and the last failure, as hark_otlp_stats gives them. */
void hark__otlp_transport_stats(hark__otlp_transport *t, hark_otlp_stats *out);
/* POSTs `len` bytes to the endpoint of `signal` (SIG_*) with its headers and TLS
 * files (a JSON body when the configuration says so), retrying as OTLP says.
 * Returns 0 (accepted) or HARK_EIO. Worker only. */
int hark__otlp_post(hark__otlp_transport *t, int signal, const uint8_t *body, size_t len);

#endif /* HARK_OTLP_TRANSPORT_H */
