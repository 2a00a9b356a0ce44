/* Name checks shared by the core (names, patterns) and the subscribers (suffixes,
 * namespaces). */
#include "hark/common.h"
#include "error.h"
#include "name.h"

#include <string.h>

int hark__check_name(const char *name, size_t *length)
{
    if (!name)
        return hark__error(HARK_EINVAL, "the name or pattern is NULL");
    size_t len = strnlen(name, HARK_NAME_MAX + 1);
    if (len == 0)
        return hark__error(HARK_ENAME, "the name or pattern is empty");
    if (len > HARK_NAME_MAX)
        return hark__error(HARK_ENAMETOOLONG,
                           "the name or pattern \"%.32s...\" is longer than HARK_NAME_MAX (%d "
                           "bytes)",
                           name, HARK_NAME_MAX);
    if (length)
        *length = len;
    return 0;
}
