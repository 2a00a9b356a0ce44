/*
 * The stream sink: lines written to a FILE * with fwrite(3) (stdio's buffering
 * and locking), flushed with fflush(3). The stream is borrowed.
 */
#include "sinks.h"

#include <stdio.h>

static int stream_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level;
    return fwrite(line, 1, len, data) == len ? 0 : HARK_EIO;
}

static int stream_flush(void *data)
{
    return fflush(data) == 0 ? 0 : HARK_EIO;
}

static int stream_fd(void *data)
{
    return fileno(data);
}

int hark__sink_stream(struct hark__sink *out, FILE *fp)
{
    *out = (struct hark__sink){.ops = {.write = stream_write,
                                       .flush = stream_flush,
                                       .data = fp,
                                       .version = HARK_LOG_SINK_VERSION},
                               .fd = stream_fd};
    return 0;
}
