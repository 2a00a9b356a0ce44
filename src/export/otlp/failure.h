/* Internal: why an OTLP request failed, and whether to try again (failure.c). */
#ifndef HARK_OTLP_FAILURE_H
#define HARK_OTLP_FAILURE_H

#include "hark/otlp.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

/* What one attempt gave. */
typedef struct hark__otlp_attempt {
    CURLcode rc;
    long status;      /* the HTTP status, when rc is CURLE_OK */
    long verify;      /* CURLINFO_SSL_VERIFYRESULT */
    const char *text; /* libcurl's error buffer ("" or NULL: none) */
} hark__otlp_attempt;

/* The failure an attempt that did not get a 2xx answer is; *retry says whether
 * OTLP's rules retry it; `why` gets a sentence (libcurl's words included, never a
 * header value). */
hark_otlp_failure hark__otlp_failure_of(const hark__otlp_attempt *a, bool *retry, char *why,
                                        size_t n);

static inline bool hark__otlp_failure_is_tls(hark_otlp_failure f)
{
    return f >= HARK_OTLP_FAILURE_TLS_UNTRUSTED && f <= HARK_OTLP_FAILURE_TLS;
}

#endif /* HARK_OTLP_FAILURE_H */
