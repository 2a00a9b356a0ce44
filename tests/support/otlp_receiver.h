/*
 * The OTLP receiver of the tests (tests/export/otlp/receiver.js: node, decoding with
 * OpenTelemetry's own codec), started and driven from C: plain HTTP or HTTPS, its
 * control endpoints (/control, /check, /quit) reached with libcurl. Header-only: each
 * test program includes it once.
 */
#ifndef HARK_TEST_OTLP_RECEIVER_H
#define HARK_TEST_OTLP_RECEIVER_H

#include <curl/curl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a growing string ------------------------------------------------------------- */

typedef struct str {
    char *p;
    size_t len, cap;
} str;

static void add(str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(str *s, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(s->p ? s->p + s->len : NULL, s->p ? s->cap - s->len : 0, fmt, ap);
        va_end(ap);
        if (s->p && (size_t)n < s->cap - s->len) {
            s->len += (size_t)n;
            return;
        }
        s->cap = (s->cap + (size_t)n + 1) * 2;
        s->p = realloc(s->p, s->cap);
        if (!s->p)
            abort();
    }
}

/* ---- the receiver ----------------------------------------------------------------- */

typedef struct receiver {
    pid_t pid;
    char base_url[64]; /* http(s)://127.0.0.1:PORT */
    /* For an HTTPS receiver: the CA its certificate is checked with (NULL: not
     * checked, for a receiver given a broken certificate on purpose), and the client
     * certificate and key to present (NULL: none). */
    const char *ca, *cert, *key;
} receiver;

/* The directory of the receiver's script has OpenTelemetry's packages (npm ci) and
 * node runs: else the test is skipped. */
static int receiver_available(const char *script)
{
    char mods[4096];
    const char *slash = strrchr(script, '/');
    snprintf(mods, sizeof mods, "%.*s/node_modules/@opentelemetry/otlp-transformer",
             slash ? (int)(slash - script) : 1, slash ? script : ".");
    if (system("node --version >/dev/null 2>&1") != 0 || access(mods, R_OK) != 0) {
        printf("SKIP: node or %s missing (npm ci in tests/export/otlp)\n", mods);
        return 0;
    }
    return 1;
}

/* Starts `script` with `args` (NULL-terminated, may be NULL) and waits for its
 * port; `https` says which scheme it serves. 0, or -1 when it did not start. */
static int receiver_start(receiver *r, const char *script, const char *const *args, int https)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    r->pid = fork();
    if (r->pid == 0) {
        const char *argv[16] = {"node", script};
        int n = 2;
        for (int i = 0; args && args[i] && n < 15; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execvp("node", (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[128];
    int port = 0;
    if (f && fgets(line, sizeof line, f))
        sscanf(line, "PORT %d", &port);
    if (f)
        fclose(f);
    if (port <= 0)
        return -1;
    snprintf(r->base_url, sizeof r->base_url, "%s://127.0.0.1:%d", https ? "https" : "http", port);
    return 0;
}

static size_t receiver_keep_body(char *buf, size_t size, size_t n, void *data)
{
    add(data, "%.*s", (int)(size * n), buf);
    return size * n;
}

/* POSTs `body` to the receiver's `path`; returns the status (0: no answer), the
 * answer in *answer when given. */
static long receiver_post(const receiver *r, const char *path, const char *body, str *answer)
{
    char url[128];
    snprintf(url, sizeof url, "%s%s", r->base_url, path);
    CURL *c = curl_easy_init();
    str ignored = {0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, receiver_keep_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, answer ? answer : &ignored);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    if (r->ca) {
        curl_easy_setopt(c, CURLOPT_CAINFO, r->ca);
    } else {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (r->cert) {
        curl_easy_setopt(c, CURLOPT_SSLCERT, r->cert);
        curl_easy_setopt(c, CURLOPT_SSLKEY, r->key);
    }
    long status = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    free(ignored.p);
    return status;
}

/* The start of a receiver test's main(): the receiver's script is argv[1], else
 * `default_script`; skipped without node or its packages; SIGPIPE ignored,
 * libcurl set up, the receiver started over plain HTTP. Returns 0 to go on, or the
 * exit status: 77 (skipped) or 1 (it did not start). */
static inline int receiver_main_start(receiver *r, int argc, char **argv,
                                      const char *default_script)
{
    const char *script = argc > 1 ? argv[1] : default_script;
    if (!receiver_available(script))
        return 77;
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (receiver_start(r, script, NULL, 0) != 0) {
        fprintf(stderr, "the receiver did not start\n");
        return 1;
    }
    return 0;
}

/* Asks the receiver to quit and waits for it (killed if it does not answer). */
static void receiver_stop(receiver *r)
{
    if (!r->pid)
        return;
    if (receiver_post(r, "/quit", "", NULL) != 200)
        kill(r->pid, SIGTERM);
    waitpid(r->pid, NULL, 0);
    r->pid = 0;
}

#endif /* HARK_TEST_OTLP_RECEIVER_H */
