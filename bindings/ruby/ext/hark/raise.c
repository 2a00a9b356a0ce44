/*
 * raise.c -- a hark error as the Ruby exception the extension's exporters raise
 * (Hark::Recorder, Hark::Metrics, Hark::OTLP): NoMemError for HARK_ENOMEM, IOError for
 * what the system refused (HARK_EIO, HARK_EBIND), ArgumentError for the rest, each with
 * hark's own message (hark_error_last()).
 */
#include "hark_ext.h"

void raise_hark_last(int rc, const char *what)
{
    raise_hark_why(rc, what, hark_error_last()->message);
}

void raise_hark_why(int rc, const char *what, const char *why)
{
    if (rc == HARK_ENOMEM)
        rb_raise(rb_eNoMemError, "hark: %s: %s", what, why);
    if (rc == HARK_EIO || rc == HARK_EBIND)
        rb_raise(rb_eIOError, "hark: %s: %s", what, why);
    rb_raise(rb_eArgError, "hark: %s: %s", what, why);
}
