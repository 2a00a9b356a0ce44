/* hark/version.h -- compile-time and run-time version numbers. */
#ifndef HARK_VERSION_H
#define HARK_VERSION_H

#include "hark/common.h"

#define HARK_VERSION_MAJOR 0
#define HARK_VERSION_MINOR 1
#define HARK_VERSION_PATCH 0
#define HARK_VERSION_STRING "0.1.0"
/* One number that grows with each release: major * 10000 + minor * 100 + patch. */
#define HARK_VERSION_NUMBER                                                                        \
    (HARK_VERSION_MAJOR * 10000 + HARK_VERSION_MINOR * 100 + HARK_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* Returns HARK_VERSION_NUMBER of the library actually linked. Thread-safety: safe. */
HARK_API int hark_version(void);
/* Returns HARK_VERSION_STRING of the library actually linked. Thread-safety: safe. */
HARK_API const char *hark_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* HARK_VERSION_H */
