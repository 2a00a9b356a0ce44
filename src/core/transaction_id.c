/*
 * Transaction ids: the calling thread's id for a notifier (hark_transaction_id(),
 * and every event's transaction_id).
 *
 * Rails gives each thread one instrumenter per notifier, with 10 random bytes as
 * its id. hark derives the id from a random per-thread seed and the notifier's
 * serial number, so it needs no table: the same thread and notifier always give
 * the same id, and the last one is cached (hark__fill_id() in internal.h, inline
 * on the dispatch path; this file is its slow path).
 */
#include "internal.h"
#include "error.h"

#include <pthread.h>
#include <sys/random.h>
#include <time.h>

HARK__TLS struct hark__id_cache hark__ids;

static uint64_t mix(uint64_t x)
{
    /* splitmix64's finaliser: a bijection that spreads every input bit. */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void seed_thread(struct hark__id_cache *c)
{
    if (getrandom(c->seed, sizeof c->seed, GRND_NONBLOCK) != (ssize_t)sizeof c->seed) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        c->seed[0] = mix((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32));
        c->seed[1] = mix((uint64_t)(uintptr_t)c ^ (uint64_t)pthread_self());
    }
    c->seed[0] |= 1; /* never all zero, so "seeded" is observable */
}

void hark__id_refresh(const hark_notifier *n)
{
    struct hark__id_cache *c = &hark__ids;
    if (!c->seed[0])
        seed_thread(c);
    static const char hex[] = "0123456789abcdef";
    uint64_t hi = mix(c->seed[0] ^ mix(n->serial));
    uint64_t lo = mix(c->seed[1] ^ hi);
    for (int i = 0; i < 16; i++)
        c->id[i] = hex[(hi >> (60 - 4 * i)) & 0xf];
    for (int i = 0; i < 4; i++)
        c->id[16 + i] = hex[(lo >> (12 - 4 * i)) & 0xf];
    c->id[HARK_ID_LEN] = '\0';
    c->serial = n->serial;
}

int hark_transaction_id(hark_notifier *n, char out[HARK_ID_LEN + 1])
{
    if (!n || !out)
        return hark__error(HARK_EINVAL, "hark_transaction_id: %s is NULL",
                           !n ? "the notifier" : "out");
    hark__fill_id(out, n);
    return 0;
}
