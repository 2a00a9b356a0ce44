/*
 * The web configuration file of Prometheus' exporter-toolkit (server_config.h),
 * read with libyaml, so that operators can point hark at the file their other
 * exporters use:
 *
 *     tls_server_config: {cert_file, key_file, client_ca_file, client_auth_type,
 *                         min_version, max_version}
 *     basic_auth_users:  {name: bcrypt hash, ...}
 *     http_server_config: {http2}      (accepted, without effect: HTTP/1.1 only)
 *
 * As exporter-toolkit, a key it does not know is an error ("unknown key", with the
 * nearest known one suggested: a misspelt key_file reads as a typo, not as a
 * missing feature); so is one of exporter-toolkit's that hark does not implement
 * (cipher_suites, client_allowed_sans, ...): a security setting is never silently
 * dropped. Paths are relative to the file's directory, as there.
 */
#include "server_config.h"
#include "alloc.h"
#include "error.h"
#include "nearest_word.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void hark__web_settings_free(hark__web_settings *s)
{
    hark__free(s->cert_file);
    hark__free(s->key_file);
    hark__free(s->client_ca_file);
    for (size_t i = 0; i < s->user_count; i++) {
        hark__free((char *)(uintptr_t)s->users[i].name);
        hark__free((char *)(uintptr_t)s->users[i].bcrypt_hash);
    }
    hark__free(s->users);
    memset(s, 0, sizeof *s);
}

#ifndef HARK_HAVE_YAML

int hark__web_config_read(hark__web_settings *s, const char *path)
{
    memset(s, 0, sizeof *s);
    return hark__error(HARK_ENOTSUP,
                       "web config \"%s\": this build of hark has no YAML reader (libyaml)", path);
}

#else

#include <yaml.h>

typedef struct reader {
    yaml_document_t doc;
    const char *path;
    char dir[4096]; /* the file's directory, "" for the current one */
    hark__web_settings *s;
} reader;

static int bad(const reader *r, const yaml_node_t *n, const char *fmt, ...) HARK_PRINTF(3, 4);
static int bad(const reader *r, const yaml_node_t *n, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return hark__error(HARK_EINVAL, "web config \"%s\": line %lu: %s", r->path,
                       (unsigned long)(n ? n->start_mark.line + 1 : 0), why);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A path from the file, relative to its directory unless absolute. */
static int path_of(const reader *r, const yaml_node_t *n, const char *key, char **out)
{
    const char *v = scalar(n);
    if (!v || !*v)
        return bad(r, n, "tls_server_config.%s: a file name is expected", key);
    size_t need = strlen(r->dir) + strlen(v) + 2;
    hark__free(*out);
    if (!(*out = hark__malloc(need)))
        return HARK_ENOMEM;
    snprintf(*out, need, "%s%s%s", v[0] == '/' || !r->dir[0] ? "" : r->dir,
             v[0] == '/' || !r->dir[0] ? "" : "/", v);
    return 0;
}

static int tls_version(const reader *r, const yaml_node_t *n, const char *key, int *out)
{
    static const char *const names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
    const char *v = scalar(n);
    for (int i = 0; v && i < 4; i++)
        if (!strcmp(v, names[i])) {
            *out = 10 + i;
            return 0;
        }
    return bad(r, n, "tls_server_config.%s: \"%s\" is not TLS10, TLS11, TLS12 or TLS13", key,
               v ? v : "(not a string)");
}

static int client_auth(const reader *r, const yaml_node_t *n)
{
    static const struct {
        const char *name;
        hark_metrics_client_auth value;
    } types[] = {{"NoClientCert", HARK_METRICS_NO_CLIENT_CERT},
                 {"VerifyClientCertIfGiven", HARK_METRICS_VERIFY_CLIENT_CERT_IF_GIVEN},
                 {"RequireAndVerifyClientCert", HARK_METRICS_REQUIRE_AND_VERIFY_CLIENT_CERT}};
    const char *v = scalar(n);
    for (size_t i = 0; v && i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(v, types[i].name)) {
            r->s->client_auth = types[i].value;
            return 0;
        }
    return bad(r, n,
               "tls_server_config.client_auth_type: \"%s\" is not supported (NoClientCert, "
               "VerifyClientCertIfGiven or RequireAndVerifyClientCert)",
               v ? v : "(not a string)");
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Each section's keys: those hark reads, and those of exporter-toolkit's that it
 * does not implement. */
static const char *const top_keys[] = {"tls_server_config", "basic_auth_users",
                                       "http_server_config"};
static const char *const tls_keys[] = {"cert_file",        "key_file",    "client_ca_file",
                                       "client_auth_type", "min_version", "max_version"};
static const char *const tls_not_implemented[] = {"cert",
                                                  "key",
                                                  "client_ca",
                                                  "cipher_suites",
                                                  "curve_preferences",
                                                  "prefer_server_cipher_suites",
                                                  "client_allowed_sans"};
static const char *const http_keys[] = {"http2"};
static const char *const http_not_implemented[] = {"headers"};

static bool listed(const char *key, const char *const *keys, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!strcmp(key, keys[i]))
            return true;
    return false;
}

/* A key that is not one hark reads: not implemented, or unknown with the nearest
 * known key suggested. `section` is "" at the top, else "tls_server_config." and
 * the like. */
static int not_read(const reader *r, const yaml_node_t *k, const char *section, const char *key,
                    const char *const *keys, size_t count, const char *const *not_implemented,
                    size_t not_implemented_count)
{
    if (!key)
        return bad(r, k, "%sa key is not a string", section);
    if (listed(key, not_implemented, not_implemented_count))
        return bad(r, k, "%s%s is not supported by hark", section, key);
    const char *near = hark__nearest_word(key, keys, count);
    if (near)
        return bad(r, k, "%s%s is an unknown key; did you mean %s%s?", section, key, section, near);
    return bad(r, k, "%s%s is an unknown key", section, key);
}

#define FOR_PAIRS(r, map, p)                                                                       \
    for (yaml_node_pair_t *p = (map)->data.mapping.pairs.start; p < (map)->data.mapping.pairs.top; \
         p++)

static int tls_server_config(reader *r, const yaml_node_t *map)
{
    if (map->type != YAML_MAPPING_NODE)
        return bad(r, map, "tls_server_config: a mapping is expected");
    FOR_PAIRS(r, map, p)
    {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);
        const char *key = scalar(k);
        int rc;
        if (!key || !listed(key, tls_keys, COUNT(tls_keys)))
            rc = not_read(r, k, "tls_server_config.", key, tls_keys, COUNT(tls_keys),
                          tls_not_implemented, COUNT(tls_not_implemented));
        else if (!strcmp(key, "cert_file"))
            rc = path_of(r, v, key, &r->s->cert_file);
        else if (!strcmp(key, "key_file"))
            rc = path_of(r, v, key, &r->s->key_file);
        else if (!strcmp(key, "client_ca_file"))
            rc = path_of(r, v, key, &r->s->client_ca_file);
        else if (!strcmp(key, "client_auth_type"))
            rc = client_auth(r, v);
        else if (!strcmp(key, "min_version"))
            rc = tls_version(r, v, key, &r->s->min_version);
        else
            rc = tls_version(r, v, key, &r->s->max_version);
        if (rc)
            return rc;
    }
    if (!r->s->cert_file || !r->s->key_file)
        return bad(r, map, "tls_server_config: cert_file and key_file are both needed");
    return 0;
}

static int basic_auth_users(reader *r, const yaml_node_t *map)
{
    if (map->type != YAML_MAPPING_NODE)
        return bad(r, map, "basic_auth_users: a mapping of user: bcrypt hash is expected");
    size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    hark__web_settings *s = r->s;
    if (!(s->users = hark__calloc(n ? n : 1, sizeof *s->users)))
        return HARK_ENOMEM;
    FOR_PAIRS(r, map, p)
    {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);
        const char *name = scalar(k), *hash = scalar(v);
        if (!name || !hash) /* the hash is not shown, the user is */
            return bad(r, k, "basic_auth_users: user \"%s\" needs a bcrypt hash as a string",
                       name ? name : "(not a string)");
        hark_metrics_basic_auth_user *u = &s->users[s->user_count++];
        if (!(u->name = hark__strdup(name)) || !(u->bcrypt_hash = hark__strdup(hash)))
            return HARK_ENOMEM;
    }
    return 0;
}

static int http_server_config(reader *r, const yaml_node_t *map)
{
    if (map->type != YAML_MAPPING_NODE)
        return bad(r, map, "http_server_config: a mapping is expected");
    FOR_PAIRS(r, map, p)
    {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        const char *key = scalar(k);
        if (!key || !listed(key, http_keys, COUNT(http_keys)))
            return not_read(r, k, "http_server_config.", key, http_keys, COUNT(http_keys),
                            http_not_implemented, COUNT(http_not_implemented));
    }
    return 0;
}

static int top(reader *r, const yaml_node_t *root)
{
    if (!root || (root->type == YAML_SCALAR_NODE && !*scalar(root)))
        return 0; /* an empty file: plain HTTP, no auth */
    if (root->type != YAML_MAPPING_NODE)
        return bad(r, root, "a mapping is expected at the top");
    FOR_PAIRS(r, root, p)
    {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);
        const char *key = scalar(k);
        int rc;
        if (!key || !listed(key, top_keys, COUNT(top_keys)))
            rc = not_read(r, k, "", key, top_keys, COUNT(top_keys), NULL, 0);
        else if (!strcmp(key, "tls_server_config"))
            rc = tls_server_config(r, v);
        else if (!strcmp(key, "basic_auth_users"))
            rc = basic_auth_users(r, v);
        else
            rc = http_server_config(r, v);
        if (rc)
            return rc;
    }
    return 0;
}

int hark__web_config_read(hark__web_settings *s, const char *path)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "re");
    if (!f)
        return hark__error(HARK_EIO, "web config \"%s\": cannot read it: %s", path,
                           strerror(errno));
    reader r = {.path = path, .s = s};
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(r.dir, sizeof r.dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    yaml_parser_t parser;
    int rc = 0;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return HARK_ENOMEM;
    }
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &r.doc)) {
        rc = hark__error(HARK_EINVAL, "web config \"%s\": line %lu: %s", path,
                         (unsigned long)parser.problem_mark.line + 1,
                         parser.problem ? parser.problem : "not YAML");
    } else {
        rc = top(&r, yaml_document_get_root_node(&r.doc));
        yaml_document_delete(&r.doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    if (rc)
        hark__web_settings_free(s);
    return rc;
}

#endif /* HARK_HAVE_YAML */
