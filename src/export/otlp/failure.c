/*
 * Why a request failed, sorted into what a user can act on (hark_otlp_failure,
 * with a sentence): a collector down or busy, an HTTP answer, or a TLS failure --
 * a CA not trusted, a certificate expired or made for another host, a client
 * certificate refused. Only a collector that is down or busy is worth trying
 * again; a TLS failure is not (the next attempt would fail the same way).
 *
 * libcurl says "peer failed verification" for every certificate problem; the
 * reason is in OpenSSL's verification result (CURLINFO_SSL_VERIFYRESULT) and in
 * libcurl's error text, which is read too so that a libcurl built on GnuTLS is
 * understood as well.
 */
#include "failure.h"

#include <stdio.h>
#include <string.h>

/* OpenSSL's X509_V_ERR_* codes (x509_vfy.h, unchanged since OpenSSL 1.0), as
 * CURLINFO_SSL_VERIFYRESULT gives them with an OpenSSL libcurl. */
enum {
    V_UNABLE_TO_GET_ISSUER_CERT = 2,
    V_CERT_NOT_YET_VALID = 9,
    V_CERT_HAS_EXPIRED = 10,
    V_DEPTH_ZERO_SELF_SIGNED_CERT = 18,
    V_SELF_SIGNED_CERT_IN_CHAIN = 19,
    V_UNABLE_TO_GET_ISSUER_CERT_LOCALLY = 20,
    V_UNABLE_TO_VERIFY_LEAF_SIGNATURE = 21,
    V_CERT_UNTRUSTED = 27,
    V_HOSTNAME_MISMATCH = 62,
    V_IP_ADDRESS_MISMATCH = 64
};

static bool has(const char *text, const char *what)
{
    return text && strstr(text, what);
}

/* A certificate the server sent that did not verify: which way. */
static hark_otlp_failure peer_failure(long verify, const char *text)
{
    switch (verify) {
    case V_CERT_NOT_YET_VALID:
    case V_CERT_HAS_EXPIRED:
        return HARK_OTLP_FAILURE_TLS_EXPIRED;
    case V_HOSTNAME_MISMATCH:
    case V_IP_ADDRESS_MISMATCH:
        return HARK_OTLP_FAILURE_TLS_HOSTNAME;
    case V_UNABLE_TO_GET_ISSUER_CERT:
    case V_DEPTH_ZERO_SELF_SIGNED_CERT:
    case V_SELF_SIGNED_CERT_IN_CHAIN:
    case V_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case V_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case V_CERT_UNTRUSTED:
        return HARK_OTLP_FAILURE_TLS_UNTRUSTED;
    default:
        break;
    }
    if (has(text, "expired") || has(text, "not yet valid") || has(text, "not activated"))
        return HARK_OTLP_FAILURE_TLS_EXPIRED;
    if (has(text, "target host name") || has(text, "does not match") || has(text, "subject name"))
        return HARK_OTLP_FAILURE_TLS_HOSTNAME;
    if (has(text, "issuer") || has(text, "self-signed") || has(text, "self signed") ||
        has(text, "NOT trusted"))
        return HARK_OTLP_FAILURE_TLS_UNTRUSTED;
    return HARK_OTLP_FAILURE_TLS;
}

/* A TLS alert from the server that means it refused this client's certificate
 * (or the lack of one). */
static bool client_refused(const char *text)
{
    return has(text, "alert certificate required") || has(text, "alert bad certificate") ||
           has(text, "alert unknown ca") || has(text, "alert certificate unknown") ||
           has(text, "alert access denied") || has(text, "certificate required");
}

static const char *const sentence[] = {
    [HARK_OTLP_FAILURE_NONE] = "",
    [HARK_OTLP_FAILURE_CONNECT] = "the collector could not be reached",
    [HARK_OTLP_FAILURE_HTTP] = "the collector answered",
    [HARK_OTLP_FAILURE_TLS_UNTRUSTED] = "TLS: the server's certificate is not signed by a "
                                        "trusted CA",
    [HARK_OTLP_FAILURE_TLS_EXPIRED] = "TLS: the server's certificate has expired or is not "
                                      "valid yet",
    [HARK_OTLP_FAILURE_TLS_HOSTNAME] = "TLS: the server's certificate is not for this host name",
    [HARK_OTLP_FAILURE_TLS_CLIENT] = "TLS: the server refused this client's certificate (or its "
                                     "lack of one)",
    [HARK_OTLP_FAILURE_TLS] = "TLS: the secure connection failed",
    [HARK_OTLP_FAILURE_OTHER] = "the request failed",
};

hark_otlp_failure hark__otlp_failure_of(const hark__otlp_attempt *a, bool *retry, char *why,
                                        size_t n)
{
    hark_otlp_failure kind;
    *retry = false;
    if (a->rc == CURLE_OK) {
        kind = HARK_OTLP_FAILURE_HTTP;
        *retry = a->status == 429 || a->status == 502 || a->status == 503 || a->status == 504;
        snprintf(why, n, "%s %ld%s", sentence[kind], a->status, *retry ? ", retried" : "");
        return kind;
    }
    switch (a->rc) {
    case CURLE_PEER_FAILED_VERIFICATION:
        kind = peer_failure(a->verify, a->text);
        break;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED:
        kind = client_refused(a->text) ? HARK_OTLP_FAILURE_TLS_CLIENT : HARK_OTLP_FAILURE_TLS;
        break;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_OPERATION_TIMEDOUT:
        /* With TLS 1.3 a server refusing the client's certificate says so after
         * the handshake, in an alert the client reads as a failed receive. */
        if (client_refused(a->text)) {
            kind = HARK_OTLP_FAILURE_TLS_CLIENT;
        } else if (has(a->text, "SSL") && has(a->text, "alert")) {
            kind = HARK_OTLP_FAILURE_TLS;
        } else {
            kind = HARK_OTLP_FAILURE_CONNECT;
            *retry = a->rc != CURLE_COULDNT_RESOLVE_HOST;
        }
        break;
    default:
        kind = HARK_OTLP_FAILURE_OTHER;
        break;
    }
    /* The reason and the decision first: libcurl's own words, which may be long,
     * are the part a short buffer cuts. */
    const char *detail = a->text && *a->text ? a->text : curl_easy_strerror(a->rc);
    const char *decision = *retry                            ? ", retried"
                           : hark__otlp_failure_is_tls(kind) ? ", not retried"
                                                             : "";
    snprintf(why, n, "%s%s (%s)", sentence[kind], decision, detail);
    return kind;
}
