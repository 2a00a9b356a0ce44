/* Internal: run a block once and record its failure in the payload. */
#ifndef HARK_BLOCK_H
#define HARK_BLOCK_H

#include "hark/event.h"

/* Runs block(payload, &failure, data) if block is not NULL; returns its status. */
int hark__run_block(hark_payload *payload, hark_block_fn block, void *data);

#endif
