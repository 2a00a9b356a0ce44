/*
 * HTTP basic auth for the metrics endpoint, with the users' passwords as bcrypt
 * hashes, as Prometheus' exporter-toolkit keeps them (basic_auth.h).
 *
 * bcrypt is libxcrypt's (crypt_rn(), crypt_checksalt(); Debian's libcrypt1, the
 * system's own password hashing): a maintained implementation of $2b$/$2y$/$2a$,
 * which also judges a hash's method and cost. GnuTLS, which the endpoint uses for
 * TLS, has no bcrypt; hark vendors none.
 *
 * Timing. Every check runs exactly one bcrypt, of the users' highest cost: against
 * the user's hash when the name is known, against a hash of a random password made
 * at start when it is not; the name is looked up and the result compared in
 * constant time. A wrong user and a wrong password cost the same (with users all of
 * one cost, which is what htpasswd gives).
 *
 * Remembering. bcrypt costs tens of milliseconds by design; a scraper sending the
 * same credentials every few seconds should not pay it every time. Credentials
 * that verified are remembered as HMAC-SHA-256(key, name NUL password) under a key
 * drawn at start (GnuTLS), one per user: a later request with the same MAC is let
 * in without bcrypt. Nothing that could be reversed into the password is kept.
 */
#include "basic_auth.h"
#include "alloc.h"
#include "error.h"

#include <crypt.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { MAC_LEN = 32, KEY_LEN = 32 };

typedef struct user {
    char *name;
    size_t name_len;
    char *hash;
    bool known_mac; /* mac holds credentials that verified */
    unsigned char mac[MAC_LEN];
} user;

struct hark__basic_auth {
    user *users;
    size_t count;
    char *dummy;     /* a bcrypt hash of a random password, for unknown names */
    size_t hash_len; /* the longest hash: every comparison spans it */
    unsigned char key[KEY_LEN];
    pthread_mutex_t lock; /* the remembered MACs and the counters */
    hark__basic_auth_work work;
};

/* The cost factor of a bcrypt hash "$2b$NN$...". */
static unsigned bcrypt_cost(const char *hash)
{
    return (unsigned)(hash[4] - '0') * 10 + (unsigned)(hash[5] - '0');
}

static bool is_bcrypt(const char *h)
{
    return h && strlen(h) == 60 && h[0] == '$' && h[1] == '2' &&
           (h[2] == 'a' || h[2] == 'b' || h[2] == 'y') && h[3] == '$' && h[4] >= '0' &&
           h[4] <= '9' && h[5] >= '0' && h[5] <= '9' && h[6] == '$' &&
           crypt_checksalt(h) == CRYPT_SALT_OK;
}

/* a[0..n) == b[0..n), in time that depends on n alone. */
static bool same(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= x[i] ^ y[i];
    return d == 0;
}

/* A string compared with a secret one in time that depends on the lengths only. */
static bool same_str(const char *s, size_t s_len, const char *secret, size_t secret_len)
{
    unsigned char d = (unsigned char)(s_len != secret_len);
    for (size_t i = 0; i < secret_len; i++)
        d |= (unsigned char)(secret[i] ^ (i < s_len ? s[i] : 0));
    return d == 0;
}

void hark__basic_auth_free(hark__basic_auth *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->count; i++) {
        hark__free(a->users[i].name);
        hark__free(a->users[i].hash);
    }
    hark__free(a->users);
    hark__free(a->dummy);
    memset(a->key, 0, sizeof a->key);
    pthread_mutex_destroy(&a->lock);
    hark__free(a);
}

static int add_users(hark__basic_auth *a, const hark_metrics_basic_auth_user *users, size_t n,
                     const char *what, unsigned *max_cost)
{
    for (size_t i = 0; i < n; i++) {
        const char *name = users[i].name;
        if (!name || !*name)
            return hark__error(HARK_EINVAL, "%s: user %zu has no name", what, i);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(users[j].name, name))
                return hark__error(HARK_EINVAL, "%s: user \"%s\" is given twice", what, name);
        if (!is_bcrypt(users[i].bcrypt_hash))
            return hark__error(HARK_EINVAL,
                               "%s: the hash of user \"%s\" is not a bcrypt hash ($2b$, $2y$ or "
                               "$2a$, its cost and 53 characters; the hash is not shown)",
                               what, name);
        user *u = &a->users[a->count];
        if (!(u->name = hark__strdup(name)) || !(u->hash = hark__strdup(users[i].bcrypt_hash)))
            return HARK_ENOMEM;
        u->name_len = strlen(name);
        a->count++;
        if (bcrypt_cost(u->hash) > *max_cost)
            *max_cost = bcrypt_cost(u->hash);
        if (strlen(u->hash) > a->hash_len)
            a->hash_len = strlen(u->hash);
    }
    return 0;
}

/* The hash unknown names are checked against: a random password's, at `cost`. */
static int make_dummy(hark__basic_auth *a, unsigned cost)
{
    char setting[CRYPT_GENSALT_OUTPUT_SIZE];
    unsigned char password[16];
    char hex[2 * sizeof password + 1];
    if (gnutls_rnd(GNUTLS_RND_RANDOM, password, sizeof password) != 0 ||
        !crypt_gensalt_rn("$2b$", cost, NULL, 0, setting, sizeof setting))
        return hark__error(HARK_EIO, "basic auth: no random bytes for its keys");
    for (size_t i = 0; i < sizeof password; i++)
        snprintf(hex + 2 * i, 3, "%02x", password[i]);
    struct crypt_data *cd = hark__calloc(1, sizeof *cd);
    if (!cd)
        return HARK_ENOMEM;
    const char *h = crypt_rn(hex, setting, cd, sizeof *cd);
    a->dummy = h ? hark__strdup(h) : NULL;
    memset(cd, 0, sizeof *cd);
    hark__free(cd);
    return a->dummy ? 0 : HARK_ENOMEM;
}

int hark__basic_auth_new(hark__basic_auth **out, const hark_metrics_basic_auth_user *users,
                         size_t n, const char *what)
{
    if (!users || n == 0)
        return hark__error(HARK_EINVAL, "%s: no users", what);
    hark__basic_auth *a = hark__calloc(1, sizeof *a);
    if (!a || !(a->users = hark__calloc(n, sizeof *a->users))) {
        hark__free(a);
        return HARK_ENOMEM;
    }
    pthread_mutex_init(&a->lock, NULL);
    unsigned cost = 0;
    int rc = add_users(a, users, n, what, &cost);
    if (!rc && gnutls_rnd(GNUTLS_RND_KEY, a->key, sizeof a->key) != 0)
        rc = hark__error(HARK_EIO, "%s: no random bytes for its key", what);
    if (!rc)
        rc = make_dummy(a, cost);
    if (rc) {
        hark__basic_auth_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

/* HMAC-SHA-256 of name NUL password under the key. */
static bool mac_of(const hark__basic_auth *a, const char *name, const char *password,
                   unsigned char out[MAC_LEN])
{
    size_t nl = strlen(name), pl = strlen(password);
    unsigned char *buf = hark__malloc(nl + 1 + pl);
    if (!buf)
        return false;
    memcpy(buf, name, nl);
    buf[nl] = 0;
    memcpy(buf + nl + 1, password, pl);
    bool ok =
        gnutls_hmac_fast(GNUTLS_MAC_SHA256, a->key, sizeof a->key, buf, nl + 1 + pl, out) == 0;
    memset(buf, 0, nl + 1 + pl);
    hark__free(buf);
    return ok;
}

bool hark__basic_auth_check(hark__basic_auth *a, const char *name, const char *password)
{
    if (!a || !name || !password)
        return false;
    /* The user, looked up without an early exit. */
    size_t found = a->count, name_len = strlen(name);
    for (size_t i = 0; i < a->count; i++) {
        bool eq = same_str(name, name_len, a->users[i].name, a->users[i].name_len);
        found = eq ? i : found;
    }
    const user *u = found < a->count ? &a->users[found] : NULL;

    unsigned char mac[MAC_LEN];
    bool have_mac = mac_of(a, name, password, mac);
    pthread_mutex_lock(&a->lock);
    bool remembered = u && have_mac && u->known_mac && same(mac, u->mac, MAC_LEN);
    if (remembered)
        a->work.remembered++;
    pthread_mutex_unlock(&a->lock);
    if (remembered)
        return true;

    const char *hash = u ? u->hash : a->dummy;
    struct crypt_data *cd = hark__calloc(1, sizeof *cd);
    if (!cd)
        return false;
    const char *got = crypt_rn(password, hash, cd, sizeof *cd);
    char want[128] = "", mine[128] = "";
    snprintf(want, sizeof want, "%s", hash);
    snprintf(mine, sizeof mine, "%s", got ? got : "");
    bool ok = same(want, mine, a->hash_len > sizeof want ? sizeof want : a->hash_len + 1) && u;
    memset(cd, 0, sizeof *cd);
    hark__free(cd);

    pthread_mutex_lock(&a->lock);
    a->work.bcrypt_runs++;
    a->work.last_cost = bcrypt_cost(hash);
    if (ok && have_mac) {
        user *w = &a->users[found];
        memcpy(w->mac, mac, MAC_LEN);
        w->known_mac = true;
    }
    pthread_mutex_unlock(&a->lock);
    memset(mac, 0, sizeof mac);
    return ok;
}

hark__basic_auth_work hark__basic_auth_work_done(hark__basic_auth *a)
{
    pthread_mutex_lock(&a->lock);
    hark__basic_auth_work w = a->work;
    pthread_mutex_unlock(&a->lock);
    return w;
}
