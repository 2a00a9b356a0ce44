/* The options versioning policy (options.h). */
#include "options.h"
#include "error.h"

#include <ctype.h>
#include <string.h>

/* "hark_trace_options" -> "HARK_TRACE_OPTIONS", for the message. */
static void upper(char *out, size_t size, const char *name)
{
    size_t i = 0;
    for (; name[i] && i + 1 < size; i++)
        out[i] = (char)toupper((unsigned char)name[i]);
    out[i] = '\0';
}

int hark__options_check(const hark__options_type *t, unsigned version)
{
    if (version >= 1 && version <= t->current)
        return 0;
    char macro[64];
    upper(macro, sizeof macro, t->name);
    return hark__error(HARK_EINVAL,
                       "%s: version %u is not accepted (this build takes 1 to %u); start "
                       "from %s_INIT or %s_init(&opts, %s_VERSION)",
                       t->name, version, t->current, macro, t->name, macro);
}

int hark__options_init(const hark__options_type *t, void *opts, unsigned version)
{
    if (!opts)
        return hark__error(HARK_EINVAL, "%s_init: opts is NULL", t->name);
    int rc = hark__options_check(t, version);
    if (rc < 0)
        return rc;
    memcpy(opts, t->defaults, t->sizes[version - 1]);
    memcpy((char *)opts + t->version_at, &version, sizeof version);
    return 0;
}

int hark__options_take(const hark__options_type *t, void *dst, const void *src)
{
    unsigned version = t->current;
    if (src) {
        memcpy(&version, (const char *)src + t->version_at, sizeof version);
        int rc = hark__options_check(t, version);
        if (rc < 0)
            return rc;
    }
    memcpy(dst, t->defaults, t->sizes[t->current - 1]);
    if (src)
        memcpy(dst, src, t->sizes[version - 1]);
    memcpy((char *)dst + t->version_at, &t->current, sizeof t->current);
    return 0;
}
