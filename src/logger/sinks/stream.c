/*
 * The stream sink: lines written to a FILE * with fwrite(3) (stdio's buffering
 * and locking), flushed with fflush(3). The stream is borrowed.
 */
#include "logger_internal.h"

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

int hark__sink_stream_fd(void *data)
{
    return fileno(data);
}

int hark__sink_stream(hark_log_sink *out, FILE *fp)
{
    *out = (hark_log_sink){
        .write = stream_write, .flush = stream_flush, .data = fp, .version = HARK_LOG_SINK_VERSION};
    return 0;
}

int hark_logger_new_file(hark_logger **out, FILE *fp)
{
    if (!out || !fp)
        return HARK_EINVAL;
    hark_log_sink s;
    (void)hark__sink_stream(&s, fp);
    return hark__logger_new_with_sink(out, &s, hark__sink_stream_fd, false);
}
