/* Attachment ids (attach_id.h). */
#include "attach_id.h"

#include <stdatomic.h>

static atomic_uint_fast64_t next_id = (UINT64_C(1) << 63) + 1;

hark_attach_id hark__attach_id_next(void)
{
    return (hark_attach_id)atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
}
