/*
 * Internal: HTTP basic auth for the metrics endpoint (basic_auth.c): users with
 * bcrypt hashes, checked so that the time of an answer does not tell a wrong user
 * from a wrong password, and credentials that verified remembered by an HMAC.
 */
#ifndef HARK_EXPORT_BASIC_AUTH_H
#define HARK_EXPORT_BASIC_AUTH_H

#include "hark/metrics.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct hark__basic_auth hark__basic_auth;

/*
 * Copies `n` users (name, bcrypt hash) into *out. `what` names where they came from
 * in messages ("basic_auth_users"). Errors (recorded for hark_error_last()): HARK_EINVAL
 * (no users, an empty name, a name twice, a hash that is not a bcrypt hash libxcrypt
 * accepts -- the message names the user, never the hash), HARK_ENOMEM, HARK_EIO (no
 * random bytes for the key).
 */
int hark__basic_auth_new(hark__basic_auth **out, const hark_metrics_basic_auth_user *users,
                         size_t n, const char *what);
void hark__basic_auth_free(hark__basic_auth *a);

/* Whether `user` with `password` may in. Thread-safety: safe. */
bool hark__basic_auth_check(hark__basic_auth *a, const char *user, const char *password);

/* What the checks have cost so far (for the tests): bcrypt runs, and the cost
 * factor of the last one. */
typedef struct hark__basic_auth_work {
    unsigned long bcrypt_runs;
    unsigned last_cost;
    unsigned long remembered; /* checks answered from the remembered credentials */
} hark__basic_auth_work;
hark__basic_auth_work hark__basic_auth_work_done(hark__basic_auth *a);

#endif /* HARK_EXPORT_BASIC_AUTH_H */
