/* Running a user's block and recording its failure in the payload (Rails' rescue). */
#include "hark/event.h"
#include "block.h"
#include "tls.h"

#include <stdio.h>

/* Messages for failures the block did not describe; one per thread, kept until its next failure. */
static HARK__TLS char fallback_message[48];

int hark__run_block(hark_payload *payload, hark_block_fn block, void *data)
{
    if (!block)
        return 0;
    hark_failure failure = {NULL, NULL, NULL};
    int rc = block(payload, &failure, data);
    if (rc != 0 && payload) {
        if (!failure.type) {
            snprintf(fallback_message, sizeof fallback_message, "block returned %d", rc);
            failure.type = "error";
            failure.message = fallback_message;
        }
        /* A payload with no reserved room cannot record it; the status still propagates. */
        (void)hark_payload_set_exception(payload, failure.type, failure.message, failure.object);
    }
    return rc;
}
