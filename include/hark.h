/*
 * hark.h -- in-process instrumentation for C: named events, subscribers, timing.
 * Include this one header; it pulls in every public part of the library except
 * the test helpers (<hark/testing.h>), the extension headers (<hark/sys/...>) and
 * the C++ wrappers (<hark/hark.hpp>).
 *
 * Which library to link: what libhark holds links with `pkg-config hark`
 * (CMake: hark::hark). The exporters -- metrics.h, trace.h, recorder.h, otlp.h --
 * are libhark-export: `pkg-config hark-export` (hark::export), which brings
 * libhark along; lttng.h is libhark-lttng: `pkg-config hark-lttng` (hark::lttng).
 * Their declarations are here whichever you link; a call into a library that is
 * not linked fails at link time, never at run time.
 */
#ifndef HARK_H
#define HARK_H

/* libhark */
#include "hark/common.h"
#include "hark/error.h"
#include "hark/exporter.h"
#include "hark/version.h"
#include "hark/payload.h"
#include "hark/event.h"
#include "hark/clock.h"
#include "hark/notifications.h"
#include "hark/logger.h"
#include "hark/color.h"
#include "hark/log_format.h"
#include "hark/log_tags.h"
#include "hark/log_sinks.h"
#include "hark/log_async.h"
#include "hark/log_env.h"
#include "hark/logf.h"
#include "hark/subscriber.h"
#include "hark/log_subscriber.h"

/* libhark-export (pkg-config hark-export, CMake hark::export) */
#include "hark/metrics.h"
#include "hark/trace.h"
#include "hark/recorder.h"
#include "hark/otlp.h"

/* libhark-lttng (pkg-config hark-lttng, CMake hark::lttng) */
#include "hark/lttng.h"

#endif /* HARK_H */
