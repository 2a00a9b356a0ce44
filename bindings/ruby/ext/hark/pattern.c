/*
 * pattern.c -- a Ruby pattern as hark's, for the extension's own C subscriptions
 * (Hark::Recorder, Hark::Metrics, Hark::OTLP), which hark matches without Ruby.
 */
#include "hark_ext.h"

/* A Ruby pattern as hark's: nil (every event), a String (that name), a Regexp (its
 * source as a PCRE2 regular expression, with its i, m and x options). */
hark_pattern ruby_pattern(VALUE pattern, VALUE *keep)
{
    if (NIL_P(pattern))
        return hark_all();
    if (RB_TYPE_P(pattern, T_STRING)) {
        *keep = rb_str_new_frozen(pattern);
        return hark_exact(StringValueCStr(*keep));
    }
    if (RB_TYPE_P(pattern, T_REGEXP)) {
        int options = NUM2INT(rb_funcall(pattern, rb_intern("options"), 0));
        VALUE src = rb_str_new_cstr("");
        if (options & 1) /* Regexp::IGNORECASE */
            rb_str_cat_cstr(src, "(?i)");
        if (options & 2) /* Regexp::EXTENDED */
            rb_str_cat_cstr(src, "(?x)");
        if (options & 4) /* Regexp::MULTILINE: "." matches a newline, PCRE2's (?s) */
            rb_str_cat_cstr(src, "(?s)");
        rb_str_append(src, rb_funcall(pattern, rb_intern("source"), 0));
        *keep = src;
        return hark_regex(StringValueCStr(*keep));
    }
    rb_raise(rb_eTypeError, "hark: a pattern is nil, a String or a Regexp, not %" PRIsVALUE,
             rb_obj_class(pattern));
}
