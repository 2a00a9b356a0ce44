/*
 * hark.h -- in-process instrumentation for C: named events, subscribers, timing.
 * Include this one header; it pulls in every public part of the library except
 * the test helpers (<hark/testing.h>) and the extension headers (<hark/sys/...>).
 */
#ifndef HARK_H
#define HARK_H

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
#include "hark/subscriber.h"
#include "hark/log_subscriber.h"

#endif /* HARK_H */
