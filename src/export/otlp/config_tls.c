/*
 * The exporter's TLS files (version 2 of hark_otlp_options): per signal, the CA
 * bundle to trust and the client's certificate and key, each from its per-signal
 * option or variable, else the general one (config.h). Each file is read once at
 * creation -- readable, PEM, a key not encrypted -- so that a wrong path fails
 * hark_otlp_new() with the path instead of every export later. A file's content
 * is never shown: a key is a secret.
 */
#include "config.h"
#include "file_read.h"
#include "alloc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { PEM_MAX = 1 << 20 }; /* bigger than any CA bundle a system ships */

typedef enum pem_kind { PEM_CERTIFICATE, PEM_KEY } pem_kind;

/* Checks that `path` (from `var`) is a readable PEM file of `kind`. */
static int check_pem(const char *var, const char *path, pem_kind kind, char *err, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    switch (hark__file_read(&buf, &len, path, PEM_MAX)) {
    case HARK__FILE_READ:
        break;
    case HARK__FILE_NO_OPEN:
        return hark__otlp_cfg_error(HARK_EIO, err, n, "%s: cannot read \"%s\": %s", var, path,
                                    strerror(errno));
    case HARK__FILE_NO_READ:
        return hark__otlp_cfg_error(HARK_EIO, err, n, "%s: cannot use \"%s\": %s", var, path,
                                    strerror(errno));
    case HARK__FILE_TOO_LARGE:
        return hark__otlp_cfg_error(HARK_EINVAL, err, n, "%s: cannot use \"%s\": larger than 1 MiB",
                                    var, path);
    case HARK__FILE_NO_MEMORY:
        return HARK_ENOMEM;
    }
    const char *why = NULL;
    if (kind == PEM_CERTIFICATE && !strstr(buf, "-----BEGIN CERTIFICATE-----"))
        why = "no PEM certificate in it (-----BEGIN CERTIFICATE-----)";
    else if (kind == PEM_KEY && (!strstr(buf, "-----BEGIN ") || !strstr(buf, "PRIVATE KEY-----")))
        why = "no PEM private key in it (-----BEGIN ... PRIVATE KEY-----)";
    else if (kind == PEM_KEY && (strstr(buf, "ENCRYPTED PRIVATE KEY") || strstr(buf, "ENCRYPTED")))
        why = "the key is encrypted: give it without a passphrase";
    if (kind == PEM_KEY)
        memset(buf, 0, len); /* key material does not outlive the check */
    hark__free(buf);
    if (!why)
        return 0;
    return hark__otlp_cfg_error(HARK_EINVAL, err, n, "%s: cannot use \"%s\": %s", var, path, why);
}

/* One file setting of signal `s` into *out (a copy), checked. */
static int tls_file(char **out, const hark_otlp_options *o, int s, const char *sig_opt,
                    const char *gen_opt, const char *setting, pem_kind kind, char var[64],
                    char *err, size_t n)
{
    const char *path = hark__otlp_signal_value(o, s, sig_opt, gen_opt, setting, var);
    if (!path)
        return 0;
    int rc = check_pem(var, path, kind, err, n);
    if (rc)
        return rc;
    return (*out = hark__strdup(path)) ? 0 : HARK_ENOMEM;
}

int hark__otlp_config_tls(hark__otlp_cfg *c, const hark_otlp_options *o, char *err, size_t n)
{
    const char *ca[SIG_COUNT] = {o->traces_certificate, o->metrics_certificate,
                                 o->logs_certificate};
    const char *key[SIG_COUNT] = {o->traces_client_key, o->metrics_client_key, o->logs_client_key};
    const char *cert[SIG_COUNT] = {o->traces_client_certificate, o->metrics_client_certificate,
                                   o->logs_client_certificate};
    for (int s = 0; s < SIG_COUNT; s++) {
        char ca_var[64], key_var[64], cert_var[64];
        int rc;
        if ((rc = tls_file(&c->ca_file[s], o, s, ca[s], o->certificate, "CERTIFICATE",
                           PEM_CERTIFICATE, ca_var, err, n)) ||
            (rc = tls_file(&c->key_file[s], o, s, key[s], o->client_key, "CLIENT_KEY", PEM_KEY,
                           key_var, err, n)) ||
            (rc = tls_file(&c->cert_file[s], o, s, cert[s], o->client_certificate,
                           "CLIENT_CERTIFICATE", PEM_CERTIFICATE, cert_var, err, n)))
            return rc;
        /* A client certificate goes with its key: one alone cannot be presented. */
        if (!c->key_file[s] != !c->cert_file[s])
            return hark__otlp_cfg_error(
                HARK_EINVAL, err, n, "%s is set but %s is not: a client certificate needs its key",
                c->key_file[s] ? key_var : cert_var, c->key_file[s] ? cert_var : key_var);
    }
    return 0;
}
