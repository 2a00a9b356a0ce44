/* hark/version.h -- compile-time and run-time version numbers. */
#ifndef HARK_VERSION_H
#define HARK_VERSION_H

#include "hark/common.h"

/*
 * The one place hark's version is written. CMake reads these three lines (the
 * project version, the SONAME libhark.so.<major>, hark.pc, the CMake package's
 * version file), and so does the Ruby gemspec; everything else takes the macros
 * below. tests/tools/version_check.py fails if any of them says otherwise. When
 * to raise which number: docs/abi.md.
 */
#define HARK_VERSION_MAJOR 1
#define HARK_VERSION_MINOR 0
#define HARK_VERSION_PATCH 0

#define HARK__VERSION_STR(x) #x
#define HARK__VERSION_XSTR(x) HARK__VERSION_STR(x)
/* "major.minor.patch", a string literal. */
#define HARK_VERSION_STRING                                                                        \
    HARK__VERSION_XSTR(HARK_VERSION_MAJOR)                                                         \
    "." HARK__VERSION_XSTR(HARK_VERSION_MINOR) "." HARK__VERSION_XSTR(HARK_VERSION_PATCH)
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
