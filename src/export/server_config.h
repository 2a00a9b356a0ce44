/*
 * Internal: how the metrics endpoint is served -- TLS, basic auth, timeout and
 * connection limit -- from hark_metrics_server_options or from an exporter-toolkit
 * web configuration file (server_config.c, web_config.c).
 */
#ifndef HARK_EXPORT_SERVER_CONFIG_H
#define HARK_EXPORT_SERVER_CONFIG_H

#include "basic_auth.h"

/* The settings as given, before the files are read: borrowed from the options, or
 * owned when read from a web configuration (web_config.c). */
typedef struct hark__web_settings {
    char *cert_file, *key_file, *client_ca_file;
    hark_metrics_client_auth client_auth;
    int min_version, max_version; /* 10 to 13 (TLS 1.x); 0: the default */
    hark_metrics_basic_auth_user *users;
    size_t user_count;
} hark__web_settings;

/* Reads the web configuration file `path` into *s (owned strings; free with
 * hark__web_settings_free()). Errors recorded for hark_error_last(): HARK_EIO
 * (unreadable), HARK_EINVAL (not YAML, a key not implemented, a bad value: the
 * message names the file, the line and the key), HARK_ENOTSUP (built without
 * libyaml), HARK_ENOMEM. */
int hark__web_config_read(hark__web_settings *s, const char *path);
void hark__web_settings_free(hark__web_settings *s);

typedef struct hark__server_config {
    /* TLS: the PEM texts of the files (NULL: plain HTTP). */
    char *cert_pem, *key_pem, *client_ca_pem;
    size_t key_pem_len;
    hark_metrics_client_auth client_auth; /* resolved: never _DEFAULT */
    char priorities[96];                  /* GnuTLS's, for the TLS versions allowed */
    hark__basic_auth *auth;               /* NULL: no basic auth */
    unsigned timeout_s, max_connections;
} hark__server_config;

/* The configuration `o` (NULL: the defaults) describes, its files read. Errors as
 * hark_metrics_server_start() says, recorded. */
int hark__server_config_load(hark__server_config *c, const hark_metrics_server_options *o);
void hark__server_config_free(hark__server_config *c);

#endif /* HARK_EXPORT_SERVER_CONFIG_H */
