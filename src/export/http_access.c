/*
 * Who may read the metrics endpoint (http_internal.h): a client certificate
 * signed by the configured client CA, verified with GnuTLS (libmicrohttpd's TLS
 * library, whose session it hands out), and HTTP basic auth (basic_auth.h).
 */
#include "http_internal.h"

#include <gnutls/gnutls.h>
#include <string.h>

static hark__mhd_result refuse(struct MHD_Connection *c, unsigned status, const char *msg,
                               bool challenge)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(msg), (void *)(uintptr_t)msg,
                                                             MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    hark__mhd_result rc = challenge ? MHD_queue_basic_auth_fail_response(c, "hark", r)
                                    : MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* The client certificate as the configuration asks: NULL, or why it is refused. */
static const char *client_certificate(const hark__server_config *cfg, struct MHD_Connection *c)
{
    if (!cfg->cert_pem || cfg->client_auth == HARK_METRICS_NO_CLIENT_CERT)
        return NULL;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_session_t tls = ci ? (gnutls_session_t)ci->tls_session : NULL;
    unsigned count = 0;
    if (!tls || !gnutls_certificate_get_peers(tls, &count) || count == 0)
        return cfg->client_auth == HARK_METRICS_VERIFY_CLIENT_CERT_IF_GIVEN
                   ? NULL
                   : "forbidden: a client certificate is required\n";
    unsigned status = 0;
    if (gnutls_certificate_verify_peers2(tls, &status) < 0 || status != 0)
        return "forbidden: the client certificate is not signed by a trusted CA, or not valid\n";
    return NULL;
}

/* The request's basic auth credentials verify. The password is wiped after. */
static bool credentials(const hark__server_config *cfg, struct MHD_Connection *c)
{
    char *password = NULL;
    char *user = MHD_basic_auth_get_username_password(c, &password);
    bool ok = user && password && hark__basic_auth_check(cfg->auth, user, password);
    if (password) {
        memset(password, 0, strlen(password));
        MHD_free(password);
    }
    if (user)
        MHD_free(user);
    return ok;
}

bool hark__http_admit(const hark__server_config *cfg, struct MHD_Connection *c,
                      hark__mhd_result *result)
{
    const char *why = client_certificate(cfg, c);
    if (why) {
        *result = refuse(c, MHD_HTTP_FORBIDDEN, why, false);
        return false;
    }
    if (cfg->auth && !credentials(cfg, c)) {
        *result = refuse(c, MHD_HTTP_UNAUTHORIZED, "unauthorized\n", true);
        return false;
    }
    return true;
}
