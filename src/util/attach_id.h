/* Internal: the ids of exporters' attachments (hark/exporter.h). */
#ifndef HARK_ATTACH_ID_H
#define HARK_ATTACH_ID_H

#include "hark/exporter.h"

#include "private.h"

/*
 * A new attachment id: unique in the process, never 0, never reused. Ids have the
 * top bit set, which no subscription id reaches (those count from 1), so that one
 * passed to hark_unsubscribe() by mistake names nothing. Thread-safety: safe.
 */
HARK__PRIVATE hark_attach_id hark__attach_id_next(void);

#endif /* HARK_ATTACH_ID_H */
