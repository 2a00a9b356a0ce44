/*
 * Internal: the one way hark declares thread-local data.
 *
 * HARK__TLS uses the initial-exec model: an access is one load relative to the
 * thread pointer instead of a call to __tls_get_addr, which matters on the
 * instrumenting fast path. The cost is a small, fixed slice of the static TLS
 * block reserved when the library is loaded; hark's thread-local data is a few
 * hundred bytes, well within what glibc keeps for dlopen()ed libraries.
 */
#ifndef HARK_TLS_H
#define HARK_TLS_H

#define HARK__TLS _Thread_local __attribute__((tls_model("initial-exec")))

#endif /* HARK_TLS_H */
