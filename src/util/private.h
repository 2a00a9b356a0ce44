/*
 * Internal: the private symbol set libhark shares with hark's own other libraries.
 *
 * util is one object library, linked into libhark only. libhark-export and
 * libhark-lttng are built beside it and use its helpers (allocator hooks, growable
 * arrays, thread slots, the JSON writer) through libhark's dynamic symbol table:
 * every function declared with HARK__PRIVATE is exported from libhark.so under the
 * version node HARK_PRIVATE_0 (src/util/private.map), never in a public header, and
 * its name starts with hark__. Programs must not use them: the node is renamed
 * whenever one of them changes, so a stale libhark-export fails to load instead of
 * calling a changed function. Static builds resolve them from libhark.a as usual.
 */
#ifndef HARK_PRIVATE_H
#define HARK_PRIVATE_H

#define HARK__PRIVATE __attribute__((visibility("default")))

#endif /* HARK_PRIVATE_H */
