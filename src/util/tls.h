/*
 * Internal: the one way hark declares thread-local data.
 *
 * HARK__TLS uses the initial-exec model: an access is one load relative to the
 * thread pointer instead of a call to __tls_get_addr, which matters on the
 * instrumenting fast path and on the logger's. Every thread-local of hark's
 * libraries is declared with it: once one of a library's thread-locals is
 * initial-exec, the library's whole TLS block goes into the static TLS area
 * (the linker marks it STATIC_TLS), so a thread-local left in the default model
 * would save no space and only cost the call.
 *
 * The cost is that fixed slice of the static TLS area, taken when the library is
 * loaded: libhark's block is 800 bytes. A library loaded at startup gets it with
 * the program's own. One loaded later with dlopen() takes it from the surplus
 * glibc keeps for that (1,664 bytes by default, for all such libraries together;
 * the glibc.rtld.nns and glibc.rtld.optional_static_tls tunables size it), and
 * dlopen() fails ("cannot allocate memory in static TLS block") when it is used up. That is the
 * case of the Ruby extension, which Ruby dlopen()s with libhark compiled into it
 * (bindings/ruby/ext/hark/extconf.rb), and of a program that dlopen()s
 * libhark-export or libhark-lttng. Keep the block small: per-thread state that
 * grows lives on the heap behind one thread-local pointer (log_tags.c).
 */
#ifndef HARK_TLS_H
#define HARK_TLS_H

#define HARK__TLS _Thread_local __attribute__((tls_model("initial-exec")))

#endif /* HARK_TLS_H */
