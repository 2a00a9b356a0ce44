/* The versioning rule of the stats structs (stats.h). */
#include "stats.h"
#include "error.h"

#include <ctype.h>
#include <string.h>

int hark__stats_check(const hark__stats_type *t, const void *out, const char *fn)
{
    unsigned version;
    memcpy(&version, out, sizeof version);
    if (version >= 1 && version <= t->current)
        return 0;
    char macro[64];
    size_t i = 0;
    for (; t->name[i] && i + 1 < sizeof macro; i++)
        macro[i] = (char)toupper((unsigned char)t->name[i]);
    macro[i] = '\0';
    return hark__error(HARK_EINVAL,
                       "%s: %s version %u is not accepted (this build takes 1 to %u); start "
                       "from %s_INIT",
                       fn, t->name, version, t->current, macro);
}

void hark__stats_put(const hark__stats_type *t, void *out, const void *full)
{
    unsigned version;
    memcpy(&version, out, sizeof version);
    size_t from = sizeof version, to = t->sizes[version - 1];
    if (full)
        memcpy((char *)out + from, (const char *)full + from, to - from);
    else
        memset((char *)out + from, 0, to - from);
}
