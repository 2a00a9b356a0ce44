/*
 * hark/hark.hpp -- C++17 helpers over the C API: an exception-safe event span,
 * instrument() with a callable that records an escaping exception in the payload
 * as Rails does, and subscribers written as lambdas.
 *
 *     hark_topic *sql;
 *     hark_topic_get(&sql, hark_default(), "sql.db");
 *     HARK_PAYLOAD(p, 2);
 *     auto rows = hark::instrument(sql, &p, [&] { return db.query("SELECT 1"); });
 *
 *     hark_subscription_id id;
 *     hark::subscribe_timed(&id, hark_default(), hark_exact("sql.db"),
 *                           [&](const char *name, double start, double finish,
 *                               const char *tid, hark_payload *payload) { ... });
 *
 * The library itself is C; this header only wraps it. Subscriber callbacks never let
 * an exception into the library: one that throws counts as a failing subscriber
 * (HARK_ESUBSCRIBER in its status, first_failure == hark::thrown), never
 * std::terminate.
 *
 * Errors as exceptions, when you want them: hark::check(rc) returns a result that
 * is not an error and throws hark::error -- code, offset and the message of
 * hark_error_last() -- for one that is:
 *
 *     hark::check(hark_subscribe(&id, n, &opts));
 *
 * Every exporter keeps one contract (hark/exporter.h), so one template attaches to
 * any of them and detaches when it goes out of scope:
 *
 *     auto a = hark::attach(hark_trace_attach, hark_trace_detach, trace, n, hark_all());
 */
#ifndef HARK_HARK_HPP
#define HARK_HARK_HPP

#include "hark.h"

#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#if defined(__GNUG__) || defined(__clang__)
#include <cstdlib>
#include <cxxabi.h>
#define HARK_HPP_CXXABI 1
#endif

namespace hark
{

/* The failure value of a subscriber callback that threw. */
constexpr int thrown = HARK_ESUBSCRIBER;

/*
 * A failed hark call as an exception: what() is the message hark_error_last() gave
 * (hark/error.h), code() the HARK_E* code, offset() the byte of a pattern where the
 * error was found (-1 otherwise).
 */
class error : public std::runtime_error
{
  public:
    error(int code, int offset, const std::string &message)
        : std::runtime_error(message), code_(code), offset_(offset)
    {
    }
    int code() const noexcept { return code_; }
    int offset() const noexcept { return offset_; }

  private:
    int code_;
    int offset_;
};

/*
 * Returns `rc` when it is not an error (>= 0); otherwise throws hark::error with
 * the calling thread's last error -- recorded by the call that returned `rc`, or
 * hark_strerror(rc) when the last error recorded is another code's.
 */
inline int check(int rc)
{
    if (rc >= 0)
        return rc;
    const hark_error *e = hark_error_last();
    if (e->code == rc)
        throw error(rc, e->offset, e->message);
    throw error(rc, -1, hark_strerror(rc));
}

/*
 * One attachment of an exporter (hark/exporter.h), detached when destroyed. Movable,
 * not copyable. Make it with hark::attach().
 */
template <class X> class attachment
{
  public:
    using detach_fn = int (*)(X *, hark_attach_id);
    attachment(X *x, hark_attach_id id, detach_fn detach) noexcept : x_(x), id_(id), detach_(detach)
    {
    }
    attachment(attachment &&o) noexcept : x_(o.x_), id_(o.id_), detach_(o.detach_) { o.id_ = 0; }
    attachment &operator=(attachment &&o) noexcept
    {
        if (this != &o) {
            reset();
            x_ = o.x_;
            id_ = o.id_;
            detach_ = o.detach_;
            o.id_ = 0;
        }
        return *this;
    }
    attachment(const attachment &) = delete;
    attachment &operator=(const attachment &) = delete;
    ~attachment() { reset(); }

    /* The attachment's id; 0 once detached or released. */
    hark_attach_id id() const noexcept { return id_; }
    /* Detaches now (if still attached). */
    void reset() noexcept
    {
        if (id_)
            (void)detach_(x_, id_);
        id_ = 0;
    }
    /* Gives up detaching: the attachment lives on, the id is the caller's. */
    hark_attach_id release() noexcept
    {
        hark_attach_id id = id_;
        id_ = 0;
        return id;
    }

  private:
    X *x_;
    hark_attach_id id_;
    detach_fn detach_;
};

/*
 * Attaches exporter `x` to the events of `n` that `pattern` matches with any
 * exporter's attach (hark_trace_attach, hark_metrics_attach, hark_otlp_attach,
 * hark_lttng_attach: they share one signature) and returns the attachment, which
 * detaches with `detach` when destroyed. Throws hark::error when attaching fails
 * (nothing attached).
 */
template <class X>
attachment<X> attach(int (*attach_fn)(hark_attach_id *, X *, hark_notifier *, hark_pattern),
                     int (*detach_fn)(X *, hark_attach_id), X *x, hark_notifier *n,
                     hark_pattern pattern)
{
    hark_attach_id id = 0;
    check(attach_fn(&id, x, n, pattern));
    return attachment<X>(x, id, detach_fn);
}

/* The readable name of a type ("std::runtime_error"), demangled where the ABI allows. */
inline std::string type_name(const std::type_info &type)
{
#ifdef HARK_HPP_CXXABI
    int status = 0;
    char *demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
    if (demangled) {
        std::string name(demangled);
        std::free(demangled);
        return name;
    }
#endif
    return type.name();
}

/*
 * One event around a C++ scope: started when constructed (if anybody listens to
 * `topic`), finished when destroyed -- at the end of the scope, by return, or while
 * an exception unwinds through it. Not copyable or movable (the handle must stay
 * where it was built). Thread-safety: one thread; finish happens on the thread
 * that destroys the span.
 */
class span
{
  public:
    explicit span(hark_topic *topic, hark_payload *payload = nullptr) noexcept
        : active_(hark_enabled(topic))
    {
        if (active_)
            hark__begin(&handle_, topic, payload);
    }
    ~span()
    {
        if (active_)
            hark__end(&handle_, status_);
    }
    span(const span &) = delete;
    span &operator=(const span &) = delete;

    /* Whether anybody takes part in the event. */
    bool listening() const noexcept { return active_ && hark_handle_listening(&handle_); }
    /* The payload subscribers see; nullptr when nobody listens -- also when the topic
     * has subscribers but every one of them was silenced for this event. */
    hark_payload *payload() noexcept
    {
        return listening() ? hark_handle_payload(&handle_) : nullptr;
    }
    /* Where the finish stores its hark_status (subscriber failures); may be nullptr. */
    void status_to(hark_status *status) noexcept { status_ = status; }
    /* Records a failure of the work (hark_handle_fail): strings borrowed until the
     * finish. Returns 0 when nobody listens. */
    int set_exception(const char *type, const char *message, void *object) noexcept
    {
        /* Not listening: the caller's payload is left as it was. */
        return listening() ? hark_handle_fail(&handle_, type, message, object) : 0;
    }

  private:
    bool active_;
    hark_status *status_ = nullptr;
    hark_handle handle_;
};

/*
 * Rails' instrument with a block: runs f() exactly once inside an event on `topic`
 * (only f() when nobody listens) and returns what it returns. An exception that
 * leaves f() is recorded in the payload as Rails does -- `exception` = its class
 * name and message (what()), `exception_object` = a pointer to it (nullptr for an
 * exception not derived from std::exception) -- the event is finished, and the
 * exception is rethrown unchanged. The two strings live until the event has
 * finished; read them in subscribers, not after instrument() has thrown.
 * `payload` may be nullptr (the handle's own payload is used).
 */
template <class F> decltype(auto) instrument(hark_topic *topic, hark_payload *payload, F &&f)
{
    if (!hark_enabled(topic))
        return std::forward<F>(f)();
    std::string type, message; /* outlive the span: the payload borrows them */
    span event(topic, payload);
    try {
        return std::forward<F>(f)();
    } catch (const std::exception &e) {
        type = type_name(typeid(e));
        message = e.what();
        event.set_exception(type.c_str(), message.c_str(),
                            const_cast<void *>(static_cast<const void *>(&e)));
        throw;
    } catch (...) {
#ifdef HARK_HPP_CXXABI
        const std::type_info *current = abi::__cxa_current_exception_type();
        type = current ? type_name(*current) : "unknown exception";
#else
        type = "unknown exception";
#endif
        event.set_exception(type.c_str(), "", nullptr);
        throw;
    }
}

/* A failure recorded in a payload (hark_payload_get_exception()). */
struct recorded_exception {
    const char *type = nullptr;    /* e.g. "std::runtime_error" */
    const char *message = nullptr; /* what() */
    void *object = nullptr;        /* exception_object, or nullptr */

    /* The std::exception instrument() caught, while its event finishes (in a
     * subscriber); nullptr for one not derived from std::exception, or a failure
     * recorded by other code -- whose object is not a std::exception: only call
     * this on events instrument() finished. */
    const std::exception *std_exception() const noexcept
    {
        return static_cast<const std::exception *>(object);
    }
};

/*
 * The failure recorded in `payload`, typed, in one call: true and `out` filled, or
 * false (`out` untouched) when there is none. In a subscriber:
 *
 *     hark::recorded_exception e;
 *     if (hark::recorded(ev->payload, e))
 *         std::fprintf(stderr, "%s: %s\n", e.type, e.message);
 */
inline bool recorded(const hark_payload *payload, recorded_exception &out) noexcept
{
    recorded_exception e;
    if (hark_payload_get_exception(payload, &e.type, &e.message, &e.object) != 0)
        return false;
    out = e;
    return true;
}

namespace detail
{

template <class R> inline int result(R &&r)
{
    if constexpr (std::is_same_v<std::decay_t<R>, bool>)
        return r ? 0 : thrown;
    else
        return static_cast<int>(r);
}

/* Calls fn(args...) and maps its result to a callback return: void -> 0, an integer
 * -> itself, bool -> 0 or failure; an exception -> hark::thrown. */
template <class Fn, class... Args> inline int call(Fn &fn, Args &&...args) noexcept
{
    try {
        if constexpr (std::is_void_v<std::invoke_result_t<Fn &, Args...>>) {
            fn(std::forward<Args>(args)...);
            return 0;
        } else {
            return result(fn(std::forward<Args>(args)...));
        }
    } catch (...) {
        return thrown;
    }
}

template <class F>
int timed(const char *name, double start, double finish, const char *id, hark_payload *payload,
          void *data) noexcept
{
    return call(*static_cast<F *>(data), name, start, finish, id, payload);
}

template <class F> int event(hark_event *ev, void *data) noexcept
{
    return call(*static_cast<F *>(data), *ev);
}

template <class P>
int evented_start(const char *name, const char *id, hark_payload *payload, void *data) noexcept
{
    return call(static_cast<P *>(data)->first, name, id, payload);
}

template <class P>
int evented_finish(const char *name, const char *id, hark_payload *payload, void *data) noexcept
{
    return call(static_cast<P *>(data)->second, name, id, payload);
}

/* The callable's copy on the heap, or nullptr when memory runs out -- in the
 * allocation or in the copy itself (a captured std::string, say). */
template <class T, class... Args> T *box(Args &&...args)
{
    try {
        return new (std::nothrow) T(std::forward<Args>(args)...);
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

template <class T> void release(void *data) noexcept
{
    delete static_cast<T *>(data);
}

/* Subscribes with the closure `box` owns; the release callback deletes it. */
template <class T>
int subscribe(hark_subscription_id *out, hark_notifier *n, hark_subscribe_options &o, T *box)
{
    if (!box)
        return HARK_ENOMEM;
    o.release = &release<T>;
    o.data = box;
    int rc = hark_subscribe(out, n, &o);
    if (rc != 0)
        delete box; /* on error the release callback is not called */
    return rc;
}

} // namespace detail

/*
 * Subscribes a callable as hark_subscribe_timed() / _monotonic() / _event() /
 * _evented() would subscribe a function. The callable is moved to the heap and
 * deleted by the subscription's release callback (once no event can reach it any
 * more), or at once if subscribing fails. It may return void, an int (0 = success)
 * or a bool (true = success); a callable that throws counts as a failure
 * (hark::thrown). Errors: those of hark_subscribe(), HARK_ENOMEM (also when moving
 * or copying the callable throws std::bad_alloc; any other exception of its own
 * copy or move propagates, nothing subscribed).
 * Thread-safety: as hark_subscribe(); the callable runs on instrumenting threads.
 */
template <class F>
int subscribe_timed(hark_subscription_id *out, hark_notifier *n, hark_pattern pattern, F &&fn)
{
    using T = std::decay_t<F>;
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_TIMED;
    o.pattern = pattern;
    o.timed = &detail::timed<T>;
    return detail::subscribe(out, n, o, detail::box<T>(std::forward<F>(fn)));
}

template <class F>
int subscribe_monotonic(hark_subscription_id *out, hark_notifier *n, hark_pattern pattern, F &&fn)
{
    using T = std::decay_t<F>;
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_MONOTONIC;
    o.pattern = pattern;
    o.timed = &detail::timed<T>;
    return detail::subscribe(out, n, o, detail::box<T>(std::forward<F>(fn)));
}

/* fn(hark_event &). */
template <class F>
int subscribe_event(hark_subscription_id *out, hark_notifier *n, hark_pattern pattern, F &&fn)
{
    using T = std::decay_t<F>;
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENT;
    o.pattern = pattern;
    o.event = &detail::event<T>;
    return detail::subscribe(out, n, o, detail::box<T>(std::forward<F>(fn)));
}

/* start(name, id, payload) and finish(name, id, payload). */
template <class S, class E>
int subscribe_evented(hark_subscription_id *out, hark_notifier *n, hark_pattern pattern, S &&start,
                      E &&finish)
{
    using P = std::pair<std::decay_t<S>, std::decay_t<E>>;
    hark_subscribe_options o = HARK_SUBSCRIBE_OPTIONS_INIT;
    o.kind = HARK_KIND_EVENTED;
    o.pattern = pattern;
    o.start = &detail::evented_start<P>;
    o.finish = &detail::evented_finish<P>;
    return detail::subscribe(out, n, o,
                             detail::box<P>(std::forward<S>(start), std::forward<E>(finish)));
}

} // namespace hark

#endif /* HARK_HARK_HPP */
