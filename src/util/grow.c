/* The one growable-array helper behind every hand-written array in hark. */
#include "hark/common.h"
#include "alloc.h"
#include "error.h"
#include "grow.h"

#include <stdint.h>
#include <string.h>

int hark__grow(void *arrayp, size_t *capacity, size_t want, size_t size, size_t initial)
{
    if (want <= *capacity)
        return 0;
    size_t cap = *capacity ? *capacity : (initial ? initial : 1);
    while (cap < want) {
        if (cap > SIZE_MAX / 2)
            return hark__error(HARK_ENOMEM, "out of memory: an array of %zu items", want);
        cap *= 2;
    }
    if (cap > SIZE_MAX / size)
        return hark__error(HARK_ENOMEM, "out of memory: an array of %zu items", want);
    /* The caller's pointer variable is read and written as bytes: it may be of any
     * object pointer type. */
    void *array;
    memcpy(&array, arrayp, sizeof array);
    void *grown = hark__realloc(array, cap * size);
    if (!grown)
        return HARK_ENOMEM;
    memcpy(arrayp, &grown, sizeof grown);
    *capacity = cap;
    return 0;
}
