/* Name checks shared by the core (names, patterns) and the subscribers (suffixes,
 * namespaces). */
#include "hark/common.h"
#include "name.h"

#include <string.h>

int hark__check_name(const char *name, size_t *length)
{
    if (!name)
        return HARK_EINVAL;
    size_t len = strnlen(name, HARK_NAME_MAX + 1);
    if (len == 0)
        return HARK_ENAME;
    if (len > HARK_NAME_MAX)
        return HARK_ENAMETOOLONG;
    if (length)
        *length = len;
    return 0;
}
