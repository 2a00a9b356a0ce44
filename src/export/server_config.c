/*
 * How the metrics endpoint is served (server_config.h): the options read by their
 * version, or the web configuration file they name; the TLS files read into memory
 * (libmicrohttpd takes PEM text), the key wiped when freed; the TLS versions as a
 * GnuTLS priority string; the basic auth users; the timeout and connection limit.
 */
#include "server_config.h"
#include "file_read.h"
#include "alloc.h"
#include "error.h"
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

HARK__OPTIONS_DEFINE(hark_metrics_server_options_init, hark_metrics_server_options,
                     HARK_METRICS_SERVER_OPTIONS_INIT, 0, sizeof(hark_metrics_server_options))

enum { PEM_MAX = 1 << 20, DEFAULT_TIMEOUT_MS = 10000, CONNECTIONS_MAX = 65536 };

/* The whole file `path` (from `what`) as a string; *len its length. */
static int read_pem(char **out, size_t *len, const char *what, const char *path)
{
    char *buf = NULL;
    size_t n = 0;
    switch (hark__file_read(&buf, &n, path, PEM_MAX)) {
    case HARK__FILE_READ:
        break;
    case HARK__FILE_NO_OPEN:
    case HARK__FILE_NO_READ:
        return hark__error(HARK_EIO, "%s: cannot read \"%s\": %s", what, path, strerror(errno));
    case HARK__FILE_TOO_LARGE:
        return hark__error(HARK_EINVAL, "%s: \"%s\" is larger than 1 MiB", what, path);
    case HARK__FILE_NO_MEMORY:
        return HARK_ENOMEM;
    }
    if (!strstr(buf, "-----BEGIN ")) {
        memset(buf, 0, n); /* it may be a key */
        hark__free(buf);
        return hark__error(HARK_EINVAL, "%s: \"%s\" holds no PEM (-----BEGIN ...)", what, path);
    }
    *out = buf;
    *len = n;
    return 0;
}

/* GnuTLS's priorities for TLS 1.min to 1.max. */
static int priorities(char *out, size_t n, int min, int max, const char *what)
{
    if (!min)
        min = 12; /* exporter-toolkit's default */
    if (!max)
        max = 13;
    if (min > max)
        return hark__error(HARK_EINVAL, "%s: TLS min_version TLS%d is above max_version TLS%d",
                           what, min, max);
    size_t used = (size_t)snprintf(out, n, "NORMAL:-VERS-ALL");
    for (int v = max; v >= min; v--)
        used += (size_t)snprintf(out + used, n - used, ":+VERS-TLS1.%d", v - 10);
    return 0;
}

static unsigned default_connections(void)
{
    struct rlimit rl;
    rlim_t files = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
    rlim_t n = files == RLIM_INFINITY ? CONNECTIONS_MAX : files / 4 * 3;
    return n > CONNECTIONS_MAX ? CONNECTIONS_MAX : n < 1 ? 1 : (unsigned)n;
}

/* TLS and auth from the settings `s`; `what` names their origin in messages. */
static int apply(hark__server_config *c, const hark__web_settings *s, const char *what)
{
    int rc;
    if (!s->cert_file != !s->key_file)
        return hark__error(HARK_EINVAL, "%s: a TLS certificate needs its key (%s given alone)",
                           what, s->cert_file ? "cert_file" : "key_file");
    if (!s->cert_file && (s->client_ca_file || s->client_auth || s->min_version || s->max_version))
        return hark__error(HARK_EINVAL,
                           "%s: client certificates and TLS versions need TLS "
                           "(cert_file and key_file)",
                           what);
    if (s->cert_file) {
        size_t n;
        if ((rc = read_pem(&c->cert_pem, &n, what, s->cert_file)) ||
            (rc = read_pem(&c->key_pem, &c->key_pem_len, what, s->key_file)) ||
            (s->client_ca_file && (rc = read_pem(&c->client_ca_pem, &n, what, s->client_ca_file))))
            return rc;
        if ((rc = priorities(c->priorities, sizeof c->priorities, s->min_version, s->max_version,
                             what)))
            return rc;
    }
    c->client_auth = s->client_auth;
    if (c->client_auth == HARK_METRICS_CLIENT_AUTH_DEFAULT)
        c->client_auth = s->client_ca_file ? HARK_METRICS_REQUIRE_AND_VERIFY_CLIENT_CERT
                                           : HARK_METRICS_NO_CLIENT_CERT;
    if (c->client_auth > HARK_METRICS_REQUIRE_AND_VERIFY_CLIENT_CERT)
        return hark__error(HARK_EINVAL, "%s: client_auth %d is not a hark_metrics_client_auth",
                           what, (int)c->client_auth);
    if (c->client_auth != HARK_METRICS_NO_CLIENT_CERT && !s->client_ca_file)
        return hark__error(HARK_EINVAL, "%s: verifying client certificates needs client_ca_file",
                           what);
    if (s->user_count || s->users)
        return hark__basic_auth_new(&c->auth, s->users, s->user_count, what);
    return 0;
}

int hark__server_config_load(hark__server_config *c, const hark_metrics_server_options *opts)
{
    memset(c, 0, sizeof *c);
    hark_metrics_server_options o;
    int rc = hark__options_take(&options_type, &o, opts);
    if (rc)
        return rc;
    c->timeout_s = ((o.timeout_ms ? o.timeout_ms : DEFAULT_TIMEOUT_MS) + 999) / 1000;
    c->max_connections = o.max_connections ? o.max_connections : default_connections();
    hark__web_settings s = {(char *)(uintptr_t)o.tls_cert_file,
                            (char *)(uintptr_t)o.tls_key_file,
                            (char *)(uintptr_t)o.tls_client_ca_file,
                            o.client_auth,
                            0,
                            0,
                            (hark_metrics_basic_auth_user *)(uintptr_t)o.basic_auth_users,
                            o.basic_auth_user_count};
    if (o.web_config_file) {
        if (s.cert_file || s.key_file || s.client_ca_file || s.client_auth || s.users ||
            s.user_count)
            return hark__error(HARK_EINVAL,
                               "hark_metrics_server_options: web_config_file and the TLS or "
                               "basic auth fields are given together: give one or the other");
        hark__web_settings w;
        if ((rc = hark__web_config_read(&w, o.web_config_file)))
            return rc;
        char what[300];
        snprintf(what, sizeof what, "web config \"%s\"", o.web_config_file);
        rc = apply(c, &w, what);
        hark__web_settings_free(&w);
    } else {
        rc = apply(c, &s, "hark_metrics_server_options");
    }
    if (rc)
        hark__server_config_free(c);
    return rc;
}

void hark__server_config_free(hark__server_config *c)
{
    if (c->key_pem)
        memset(c->key_pem, 0, c->key_pem_len);
    hark__free(c->key_pem);
    hark__free(c->cert_pem);
    hark__free(c->client_ca_pem);
    hark__basic_auth_free(c->auth);
    memset(c, 0, sizeof *c);
}
