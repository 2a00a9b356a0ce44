/*
 * The user's sink: a hark_log_sink table of the caller's, taken and checked by
 * sink_table.c. A failure it returns (any nonzero value) is reported as HARK_EIO.
 */
#include "sinks.h"

int hark__sink_user(struct hark__sink *out, const hark_log_sink *table)
{
    *out = (struct hark__sink){.ops = *table, .user = true};
    return 0;
}
