/* Error descriptions and version numbers. */
#include "hark/common.h"
#include "hark/version.h"

#include <stddef.h>

struct error_text {
    int code;
    const char *name;
    const char *text;
};

static const struct error_text errors[] = {
    {HARK_OK, "HARK_OK", "success"},
    {HARK_EINVAL, "HARK_EINVAL", "invalid argument"},
    {HARK_ENAME, "HARK_ENAME", "name or pattern is empty"},
    {HARK_ENAMETOOLONG, "HARK_ENAMETOOLONG", "name or pattern is longer than HARK_NAME_MAX"},
    {HARK_EPATTERN, "HARK_EPATTERN", "regular expression does not compile"},
    {HARK_ENOMEM, "HARK_ENOMEM", "out of memory"},
    {HARK_ESTATE, "HARK_ESTATE", "handle used out of order"},
    {HARK_ENOENT, "HARK_ENOENT", "no such subscription or field"},
    {HARK_ESUBSCRIBER, "HARK_ESUBSCRIBER", "one or more subscribers failed"},
    {HARK_EFULL, "HARK_EFULL", "payload is full"},
    {HARK_ELIMIT, "HARK_ELIMIT", "a fixed limit would be exceeded"},
    {HARK_EBUSY, "HARK_EBUSY", "would wait on the calling thread itself"},
    {HARK_EPREPEND, "HARK_EPREPEND", "cannot prepend regex or all-events subscribers"},
    {HARK_EIO, "HARK_EIO", "input/output error"},
    {HARK_EEXIST, "HARK_EEXIST", "already exists"},
    {HARK_EBIND, "HARK_EBIND", "address cannot be bound"},
    {HARK_EMATCHLIMIT, "HARK_EMATCHLIMIT", "regex match hit its backtracking limit"},
    {HARK_ENOTSUP, "HARK_ENOTSUP", "not supported by this build"},
    {HARK_ETIMEDOUT, "HARK_ETIMEDOUT", "not done within the timeout"},
};

static const struct error_text *find(int err)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == err)
            return &errors[i];
    return NULL;
}

const char *hark_strerror(int err)
{
    const struct error_text *e = find(err);
    return e ? e->text : "unknown hark error";
}

const char *hark_err_name(int err)
{
    const struct error_text *e = find(err);
    return e ? e->name : "HARK_E?";
}

int hark_version(void)
{
    return HARK_VERSION_NUMBER;
}

const char *hark_version_string(void)
{
    return HARK_VERSION_STRING;
}
