/* Internal to the OTLP exporter: its options' version (one policy, src/util/options.h). */
#ifndef HARK_OTLP_OTLP_OPTIONS_H
#define HARK_OTLP_OTLP_OPTIONS_H

#include "hark/otlp.h"

/* *dst gets `src` (NULL: HARK_OTLP_OPTIONS_INIT) read by its version; HARK_EINVAL
 * (recorded for hark_error_last()) when the version is refused. */
int hark__otlp_options_load(hark_otlp_options *dst, const hark_otlp_options *src);

#endif /* HARK_OTLP_OTLP_OPTIONS_H */
