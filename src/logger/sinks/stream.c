/*
 * The stream sink: lines written to a FILE * with fwrite(3) (stdio's buffering
 * and locking), flushed with fflush(3). The stream is borrowed.
 */
#include "sinks.h"
#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int stream_write(hark_log_level level, const char *line, size_t len, void *data)
{
    (void)level;
    if (HARK_LIKELY(fwrite(line, 1, len, data) == len))
        return 0;
    return hark__error(HARK_EIO, "the stream cannot be written: %s", strerror(errno));
}

static int stream_flush(void *data)
{
    if (fflush(data) == 0)
        return 0;
    return hark__error(HARK_EIO, "the stream cannot be flushed: %s", strerror(errno));
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
