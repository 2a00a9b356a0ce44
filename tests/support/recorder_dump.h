/*
 * recorder_dump.h -- the flight recorder's tests (tests/export/): a dump read back
 * as a NUL-terminated string, checked with cmocka's assertions (include it after
 * cmocka.h). Static inline, so that each test file may use it or not.
 */
#ifndef HARK_TEST_RECORDER_DUMP_H
#define HARK_TEST_RECORDER_DUMP_H

#include <hark/recorder.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Everything hark_recorder_dump() writes of `r` in `format` (the caller frees it). */
static inline char *dump_str(hark_recorder *r, hark_recorder_format format)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(hark_recorder_dump(r, fileno(f), format), 0);
    long len = lseek(fileno(f), 0, SEEK_END);
    assert_true(len > 0);
    char *s = malloc((size_t)len + 1);
    assert_non_null(s);
    assert_int_equal(pread(fileno(f), s, (size_t)len, 0), len);
    s[len] = 0;
    fclose(f);
    return s;
}

#endif /* HARK_TEST_RECORDER_DUMP_H */
