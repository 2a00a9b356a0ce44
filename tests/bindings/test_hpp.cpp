/*
 * hark/hark.hpp, compiled as C++17 with exceptions: the RAII span finishes its event
 * however the scope is left, hark::instrument records an escaping exception in the
 * payload as Rails does and rethrows it, lambda subscribers are freed by their
 * release callback, and a subscriber that throws is a counted failure, never
 * std::terminate. Also HARK_INSTRUMENT left by an exception (cleanup attribute);
 * hark::check throwing the last error (PCRE2's message and offset for a regex);
 * hark::attach detaching at the end of the scope, with any attach of the exporter
 * contract's signature.
 */
#include <hark/hark.hpp>

#include <cstdarg>
#include <cstddef>
#include <csetjmp>
extern "C" {
#include <cmocka.h>
}

#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{

struct fx {
    hark_notifier *n = nullptr;
    hark_topic *t = nullptr;
};

int setup(void **state)
{
    auto *f = new fx;
    if (hark_notifier_new(&f->n) != 0 || hark_topic_get(&f->t, f->n, "cpp.work") != 0)
        return -1;
    *state = f;
    return 0;
}

int teardown(void **state)
{
    auto *f = static_cast<fx *>(*state);
    int rc = hark_notifier_free(f->n);
    delete f;
    return rc == 0 ? 0 : -1;
}

/* What an evented subscriber saw, recorded from lambdas. */
struct seen {
    int starts = 0, finishes = 0;
    std::string exception_type, exception_message, exception_what;
    bool exception_object = false;
};

hark_subscription_id watch(fx *f, seen *s)
{
    hark_subscription_id id = 0;
    int rc = hark::subscribe_evented(
        &id, f->n, hark_exact("cpp.work"),
        [s](const char *, const char *, hark_payload *) { s->starts++; },
        [s](const char *, const char *, hark_payload *p) {
            s->finishes++;
            hark::recorded_exception e;
            if (hark::recorded(p, e)) {
                s->exception_type = e.type;
                s->exception_message = e.message;
                s->exception_object = e.object != nullptr;
                /* instrument() records the very exception it caught. */
                if (e.std_exception())
                    s->exception_what = e.std_exception()->what();
            }
        });
    assert_int_equal(rc, 0);
    return id;
}

int returns_from_span(hark_topic *t)
{
    hark::span event(t);
    return 5;
}

void test_span_finishes_on_every_exit(void **state)
{
    auto *f = static_cast<fx *>(*state);
    seen s;
    hark_subscription_id id = watch(f, &s);
    {
        hark::span event(f->t);
        assert_true(event.listening());
        assert_non_null(event.payload());
        assert_int_equal(s.starts, 1);
        assert_int_equal(s.finishes, 0);
    }
    assert_int_equal(s.finishes, 1);
    assert_int_equal(returns_from_span(f->t), 5);
    assert_int_equal(s.finishes, 2);
    try {
        hark::span event(f->t);
        throw std::logic_error("out");
    } catch (const std::logic_error &) {
    }
    assert_int_equal(s.starts, 3);
    assert_int_equal(s.finishes, 3);
    assert_int_equal(hark_notifier_quiesce(f->n), 0); /* nothing left open */
    assert_int_equal(hark_unsubscribe(f->n, id), 0);
}

void test_instrument_returns_the_value(void **state)
{
    auto *f = static_cast<fx *>(*state);
    seen s;
    watch(f, &s);
    HARK_PAYLOAD(p, 2);
    int v = hark::instrument(f->t, &p, [] { return 42; });
    assert_int_equal(v, 42);
    std::string str = hark::instrument(f->t, nullptr, [] { return std::string("ok"); });
    assert_string_equal(str.c_str(), "ok");
    hark::instrument(f->t, nullptr, [] {});
    assert_int_equal(s.finishes, 3);
    assert_true(s.exception_type.empty());
    /* Nobody listening: only the callable runs. */
    hark_topic *quiet;
    assert_int_equal(hark_topic_get(&quiet, f->n, "cpp.quiet"), 0);
    assert_int_equal(hark::instrument(quiet, nullptr, [] { return 7; }), 7);
}

void test_instrument_records_and_rethrows(void **state)
{
    auto *f = static_cast<fx *>(*state);
    seen s;
    watch(f, &s);
    HARK_PAYLOAD(p, 1);
    bool caught = false;
    try {
        hark::instrument(f->t, &p, []() -> int { throw std::runtime_error("boom"); });
    } catch (const std::runtime_error &e) {
        caught = std::string(e.what()) == "boom";
    }
    assert_true(caught);
    assert_int_equal(s.finishes, 1);
    assert_string_equal(s.exception_type.c_str(), "std::runtime_error");
    assert_string_equal(s.exception_message.c_str(), "boom");
    assert_true(s.exception_object);
    assert_string_equal(s.exception_what.c_str(), "boom");

    caught = false;
    try {
        hark::instrument(f->t, nullptr, [] { throw 17; });
    } catch (int v) {
        caught = v == 17;
    }
    assert_true(caught);
    assert_int_equal(s.finishes, 2);
    assert_string_equal(s.exception_type.c_str(), "int");
    assert_false(s.exception_object);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
}

/* Counts destructions of the closures' captured state. */
struct tracked {
    std::atomic<int> *destroyed;
    explicit tracked(std::atomic<int> *d) : destroyed(d) {}
    tracked(const tracked &) = delete;
    ~tracked() { ++*destroyed; }
};

void test_lambda_closures_freed_by_release(void **state)
{
    auto *f = static_cast<fx *>(*state);
    std::atomic<int> destroyed{0};
    std::atomic<int> calls{0};
    hark_subscription_id ids[4];
    auto make = [&] { return std::make_shared<tracked>(&destroyed); };
    {
        auto a = make(), b = make(), c = make(), d = make();
        assert_int_equal(hark::subscribe_timed(&ids[0], f->n, hark_all(),
                                               [a, &calls](const char *, double, double,
                                                           const char *, hark_payload *) {
                                                   calls++;
                                                   return 0;
                                               }),
                         0);
        assert_int_equal(hark::subscribe_monotonic(&ids[1], f->n, hark_all(),
                                                   [b, &calls](const char *, double, double,
                                                               const char *, hark_payload *) {
                                                       calls++;
                                                       return true;
                                                   }),
                         0);
        assert_int_equal(
            hark::subscribe_event(&ids[2], f->n, hark_all(),
                                  [c, &calls](hark_event &ev) { calls += ev.name ? 1 : 0; }),
            0);
        assert_int_equal(hark::subscribe_evented(
                             &ids[3], f->n, hark_all(),
                             [d, &calls](const char *, const char *, hark_payload *) { calls++; },
                             [&calls](const char *, const char *, hark_payload *) { calls++; }),
                         0);
    }
    hark::instrument(f->t, nullptr, [] {});
    assert_int_equal(calls.load(), 5);
    assert_int_equal(destroyed.load(), 0); /* the closures hold the last references */
    for (hark_subscription_id id : ids)
        assert_int_equal(hark_unsubscribe(f->n, id), 0);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
    assert_int_equal(destroyed.load(), 4);
}

void test_throwing_subscriber_is_a_failure(void **state)
{
    auto *f = static_cast<fx *>(*state);
    int after = 0;
    assert_int_equal(hark::subscribe_timed(nullptr, f->n, hark_exact("cpp.work"),
                                           [](const char *, double, double, const char *,
                                              hark_payload *) { throw std::runtime_error("x"); }),
                     0);
    assert_int_equal(hark::subscribe_timed(nullptr, f->n, hark_exact("cpp.work"),
                                           [&after](const char *, double, double, const char *,
                                                    hark_payload *) { after++; }),
                     0);
    hark_status st{};
    {
        hark::span event(f->t);
        event.status_to(&st);
    }
    assert_int_equal(st.failures, 1);
    assert_int_equal(st.first_failure, hark::thrown);
    assert_int_equal(after, 1);
    assert_int_equal(hark_instrument(f->t, nullptr, nullptr, nullptr, &st), HARK_ESUBSCRIBER);
    assert_int_equal(after, 2);
    assert_int_equal(hark_publish(f->t, 1.0, 2.0, "id", nullptr, &st), HARK_ESUBSCRIBER);
    assert_int_equal(after, 3);
}

/* The topic has a subscriber, but it is silenced for every event: nobody listens, so
 * the span offers no payload and leaves the caller's payload alone. */
void test_span_with_every_subscriber_silenced(void **state)
{
    auto *f = static_cast<fx *>(*state);
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_MONOTONIC;
    o.pattern = hark_exact("cpp.work");
    o.timed = [](const char *, double, double, const char *, hark_payload *, void *) { return 0; };
    o.silence = HARK_SILENCE_DYNAMIC;
    o.silenced = [](const char *, void *) { return true; };
    assert_int_equal(hark_subscribe(nullptr, f->n, &o), 0);
    assert_true(hark_enabled(f->t)); /* the span does begin an event */
    HARK_PAYLOAD(p, 2);
    {
        hark::span event(f->t, &p);
        assert_false(event.listening());
        assert_null(event.payload());
        assert_int_equal(event.set_exception("std::runtime_error", "x", nullptr), 0);
    }
    assert_null(hark_payload_get(&p, "exception"));
    bool caught = false;
    try {
        hark::instrument(f->t, &p, []() -> int { throw std::runtime_error("boom"); });
    } catch (const std::runtime_error &) {
        caught = true;
    }
    assert_true(caught);
    /* No pointers into instrument()'s dead strings were left in the caller's payload. */
    assert_null(hark_payload_get(&p, "exception"));
}

/* A callable whose copy runs out of memory, as one capturing a std::string may. */
struct copy_fails {
    copy_fails() = default;
    copy_fails(const copy_fails &) { throw std::bad_alloc(); }
    void operator()(const char *, double, double, const char *, hark_payload *) const {}
    void operator()(hark_event &) const {}
    void operator()(const char *, const char *, hark_payload *) const {}
};

/* Copying the callable to the heap failing for memory is HARK_ENOMEM, as the
 * allocation failing would be, not an exception out of subscribe_*. */
void test_subscribe_copy_out_of_memory(void **state)
{
    auto *f = static_cast<fx *>(*state);
    copy_fails fn;
    hark_subscription_id id = 77;
    try {
        assert_int_equal(hark::subscribe_timed(&id, f->n, hark_all(), fn), HARK_ENOMEM);
        assert_int_equal(hark::subscribe_monotonic(&id, f->n, hark_all(), fn), HARK_ENOMEM);
        assert_int_equal(hark::subscribe_event(&id, f->n, hark_all(), fn), HARK_ENOMEM);
        assert_int_equal(hark::subscribe_evented(&id, f->n, hark_all(), fn, fn), HARK_ENOMEM);
    } catch (const std::bad_alloc &) {
        fail_msg("std::bad_alloc escaped from hark::subscribe_*");
    }
    assert_int_equal(id, 77);
    assert_false(hark_enabled(f->t)); /* nothing was subscribed */
}

#ifdef HARK_INSTRUMENT_CLEANUP
void test_macro_left_by_an_exception_finishes(void **state)
{
    auto *f = static_cast<fx *>(*state);
    seen s;
    watch(f, &s);
    bool caught = false;
    try {
        HARK_INSTRUMENT(f->t, nullptr, { throw std::runtime_error("out of the block"); });
    } catch (const std::runtime_error &) {
        caught = true;
    }
    assert_true(caught);
    assert_int_equal(s.starts, 1);
    assert_int_equal(s.finishes, 1);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
}
#endif

void test_check_throws_the_last_error(void **state)
{
    auto *f = static_cast<fx *>(*state);
    assert_int_equal(hark::check(7), 7);
    bool caught = false;
    try {
        hark::check(hark_subscribe_timed(
            nullptr, f->n, hark_regex("a(b"),
            [](const char *, double, double, const char *, hark_payload *, void *) { return 0; },
            nullptr));
    } catch (const hark::error &e) {
        caught = true;
        assert_int_equal(e.code(), HARK_EPATTERN);
        assert_int_equal(e.offset(), 3);
        assert_non_null(std::strstr(e.what(), "missing closing parenthesis"));
    }
    assert_true(caught);
    /* A code the last error does not hold: its description. */
    hark_error_clear();
    try {
        hark::check(HARK_EFULL);
        fail();
    } catch (const hark::error &e) {
        assert_string_equal(e.what(), hark_strerror(HARK_EFULL));
        assert_int_equal(e.offset(), -1);
    }
}

/* An exporter of the contract's shape (hark/exporter.h), made of one subscription per
 * attachment, for hark::attach (the real ones are in hark::export). */
struct counting {
    std::atomic<int> events{0};
    std::vector<std::pair<hark_attach_id, hark_subscription_id>> live;
    hark_notifier *n = nullptr;
};

int counting_attach(hark_attach_id *out, counting *x, hark_notifier *n, hark_pattern p)
{
    hark_subscription_id sid;
    int rc = hark::subscribe_timed(
        &sid, n, p,
        [x](const char *, double, double, const char *, hark_payload *) { x->events++; });
    if (rc < 0)
        return rc;
    static hark_attach_id next = 1;
    x->n = n;
    x->live.emplace_back(next, sid);
    *out = next++;
    return 0;
}

int counting_detach(counting *x, hark_attach_id id)
{
    for (auto it = x->live.begin(); it != x->live.end(); ++it)
        if (it->first == id) {
            int rc = hark_unsubscribe(x->n, it->second);
            x->live.erase(it);
            return rc;
        }
    return HARK_ENOENT;
}

void test_attach_detaches_on_scope_exit(void **state)
{
    auto *f = static_cast<fx *>(*state);
    counting x;
    {
        auto a = hark::attach(counting_attach, counting_detach, &x, f->n, hark_exact("cpp.work"));
        assert_true(a.id() != 0);
        assert_int_equal(hark_instrument(f->t, nullptr, nullptr, nullptr, nullptr), 0);
        auto moved = std::move(a);
        assert_int_equal(a.id(), 0);
        assert_int_equal(x.live.size(), 1);
    }
    assert_int_equal(x.live.size(), 0); /* detached once, by the moved-to one */
    assert_int_equal(hark_instrument(f->t, nullptr, nullptr, nullptr, nullptr), 0);
    assert_int_equal(x.events.load(), 1);
    bool caught = false;
    try {
        auto bad = hark::attach(counting_attach, counting_detach, &x, f->n, hark_exact(""));
    } catch (const hark::error &e) {
        caught = e.code() == HARK_ENAME;
    }
    assert_true(caught);
    assert_int_equal(x.live.size(), 0);
    auto kept = hark::attach(counting_attach, counting_detach, &x, f->n, hark_all()).release();
    assert_int_equal(counting_detach(&x, kept), 0);
    assert_int_equal(hark_notifier_quiesce(f->n), 0);
}

} // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_span_finishes_on_every_exit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_instrument_returns_the_value, setup, teardown),
        cmocka_unit_test_setup_teardown(test_instrument_records_and_rethrows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lambda_closures_freed_by_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_throwing_subscriber_is_a_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_span_with_every_subscriber_silenced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subscribe_copy_out_of_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_throws_the_last_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attach_detaches_on_scope_exit, setup, teardown),
#ifdef HARK_INSTRUMENT_CLEANUP
        cmocka_unit_test_setup_teardown(test_macro_left_by_an_exception_finishes, setup, teardown),
#endif
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
