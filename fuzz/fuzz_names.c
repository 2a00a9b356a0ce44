/*
 * Fuzz target: pattern matching and name handling.
 *
 * Input: one flag byte, then up to 8 newline-separated segments. Segment 0 is a
 * regular expression, segment 1 an exact name, the rest are event names. The target
 * subscribes a regex, an exact and an all-events subscriber on a fresh notifier,
 * interns every name, instruments it, and checks each result against an oracle:
 * the documented error codes for empty and over-long names, pcre2_compile() for
 * pattern validity, pcre2_match() (with the documented match and depth limits: a
 * name whose match hits them does not match) and strcmp() for who must receive
 * the event, and
 * hark_unsubscribe_name()'s exclusion rule. Any disagreement aborts.
 */
#include <hark.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SEGS 8
#define MAX_SEG_LEN 400

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_names: check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static int count_cb(const char *name, double start, double finish, const char *id,
                    hark_payload *payload, void *data)
{
    (void)name, (void)start, (void)finish, (void)id, (void)payload;
    ++*(unsigned long *)data;
    return 0;
}

static int expected_name_rc(const char *s)
{
    size_t len = strlen(s);
    if (len == 0)
        return HARK_ENAME;
    if (len > HARK_NAME_MAX)
        return HARK_ENAMETOOLONG;
    return 0;
}

/* The oracle: the regex compiled and matched as the header documents. Returns 1,
 * 0, or -1 when the match hit a limit (hark then treats the name as not matching). */
static int oracle_match(pcre2_code *re, const char *name)
{
    static pcre2_match_context *limits;
    static pcre2_match_data *md;
    if (!limits) {
        limits = pcre2_match_context_create(NULL);
        md = pcre2_match_data_create(1, NULL);
        CHECK(limits && md);
        pcre2_set_match_limit(limits, 100000);
        pcre2_set_depth_limit(limits, 1000);
    }
    int rc = pcre2_match(re, (PCRE2_SPTR)name, strlen(name), 0, 0, md, limits);
    if (rc >= 0)
        return 1;
    return rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    data++, size--;

    char segs[MAX_SEGS][MAX_SEG_LEN + 1];
    int nsegs = 0;
    size_t i = 0;
    while (nsegs < MAX_SEGS && i <= size) {
        size_t start = i;
        while (i < size && data[i] != '\n')
            i++;
        size_t len = i - start;
        if (len > MAX_SEG_LEN)
            len = MAX_SEG_LEN;
        memcpy(segs[nsegs], data + start, len);
        segs[nsegs][len] = '\0'; /* an embedded NUL just ends the name early */
        nsegs++;
        i++; /* skip the newline */
    }
    while (nsegs < 3) {
        strcpy(segs[nsegs], "x");
        nsegs++;
    }

    const char *re_text = segs[0];
    const char *exact_text = segs[1];
    /* Flag bit 7 repeats the exact name as an event name, so matches are common. */
    if (flags & 0x80)
        strcpy(segs[2], exact_text);

    hark_notifier *n = NULL;
    CHECK(hark_notifier_new(&n) == 0 && n != NULL);

    unsigned long got_re = 0, got_exact = 0, got_all = 0;
    hark_subscription_id id_re = 0, id_exact = 0, id_all = 0;

    /* The oracle for the regex: compiled the same way the header documents. */
    pcre2_code *oracle = NULL;
    int have_re = 0;
    {
        int rc = hark_subscribe_timed(&id_re, n, hark_regex(re_text), count_cb, &got_re);
        int want = expected_name_rc(re_text);
        if (want == 0) {
            int err;
            PCRE2_SIZE offset;
            oracle =
                pcre2_compile((PCRE2_SPTR)re_text, PCRE2_ZERO_TERMINATED, 0, &err, &offset, NULL);
            if (oracle) {
                (void)pcre2_jit_compile(oracle, PCRE2_JIT_COMPLETE);
                CHECK(rc == 0); /* no name exists yet: no match can hit the limit */
                have_re = 1;
            } else {
                CHECK(rc == HARK_EPATTERN);
            }
        } else {
            CHECK(rc == want);
        }
        if (rc != 0)
            id_re = 0;
    }

    int rc = hark_subscribe_timed(&id_exact, n, hark_exact(exact_text), count_cb, &got_exact);
    CHECK(rc == expected_name_rc(exact_text));
    if (rc != 0)
        id_exact = 0;
    CHECK(hark_subscribe_timed(&id_all, n, hark_all(), count_cb, &got_all) == 0);
    CHECK(id_all != 0 && id_all != id_exact && id_all != id_re);

    for (int s = 2; s < nsegs; s++) {
        const char *name = segs[s];
        hark_topic *t = NULL, *t2 = NULL;
        rc = hark_topic_get(&t, n, name);
        CHECK(rc == expected_name_rc(name));
        if (rc != 0) {
            CHECK(t == NULL);
            CHECK(hark_instrument_name(n, name, NULL, NULL, NULL, NULL) == expected_name_rc(name));
            continue;
        }
        CHECK(strcmp(hark_topic_name(t), name) == 0);
        CHECK(hark_topic_notifier(t) == n);
        CHECK(hark_topic_get(&t2, n, name) == 0 && t2 == t);

        int o_re = have_re ? oracle_match(oracle, name) : 0;
        int m_re = o_re == 1;
        int m_exact = id_exact != 0 && strcmp(name, exact_text) == 0;
        if (id_re)
            CHECK(hark_subscribed_to(n, id_re, name) == (o_re < 0 ? HARK_EMATCHLIMIT : m_re));
        if (id_exact)
            CHECK(hark_subscribed_to(n, id_exact, name) == m_exact);
        CHECK(hark_subscribed_to(n, id_all, name) == 1);
        CHECK(hark_enabled(t));

        unsigned long b_re = got_re, b_exact = got_exact, b_all = got_all;
        hark_status st;
        CHECK(hark_instrument(t, NULL, NULL, NULL, &st) == 0);
        CHECK(st.failures == 0);
        CHECK(got_re == b_re + (unsigned long)m_re);
        CHECK(got_exact == b_exact + (unsigned long)m_exact);
        CHECK(got_all == b_all + 1);
    }

    /* Rails' unsubscribe(name): exact subscriptions go, matching regexes exclude the
     * name, all-events subscriptions stay. */
    const char *victim = segs[2 + (flags & 0x7) % (unsigned)(nsegs - 2)];
    if (flags & 0x40)
        victim = exact_text;
    int want = expected_name_rc(victim);
    rc = hark_unsubscribe_name(n, victim);
    if (want != 0) {
        CHECK(rc == want);
    } else {
        int removed = id_exact != 0 && strcmp(victim, exact_text) == 0;
        CHECK(rc == removed);
        if (removed)
            CHECK(hark_unsubscribe(n, id_exact) == HARK_ENOENT);
        if (id_re) {
            int r = hark_subscribed_to(n, id_re, victim);
            CHECK(r == 0 || (r == HARK_EMATCHLIMIT && oracle_match(oracle, victim) < 0));
        }
        unsigned long b_re = got_re, b_exact = got_exact, b_all = got_all;
        CHECK(hark_instrument_name(n, victim, NULL, NULL, NULL, NULL) == 0);
        CHECK(got_re == b_re && got_exact == b_exact && got_all == b_all + 1);
        /* A later exact subscription to the excluded name still receives it. */
        unsigned long late = 0;
        hark_subscription_id id_late = 0;
        CHECK(hark_subscribe_timed(&id_late, n, hark_exact(victim), count_cb, &late) == 0);
        CHECK(hark_instrument_name(n, victim, NULL, NULL, NULL, NULL) == 0);
        CHECK(late == 1 && got_re == b_re);
        CHECK(hark_unsubscribe(n, id_late) == 0);
        CHECK(hark_unsubscribe(n, id_late) == HARK_ENOENT);
    }

    CHECK(hark_unsubscribe(n, id_all) == 0);
    if (id_re)
        CHECK(hark_unsubscribe(n, id_re) == 0);
    pcre2_code_free(oracle);
    CHECK(hark_notifier_free(n) == 0);
    return 0;
}
