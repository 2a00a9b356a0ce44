/*
 * Internal to the export layer: a small file the user names (a PEM certificate, a
 * key, a CA bundle) read whole into memory, with a bound on its size. The metrics
 * endpoint's TLS files (server_config.c) and the OTLP exporter's (otlp/config_tls.c)
 * are read with it; each says in its own words what went wrong.
 */
#ifndef HARK_EXPORT_FILE_READ_H
#define HARK_EXPORT_FILE_READ_H

#include <stddef.h>

typedef enum hark__file_read_status {
    HARK__FILE_READ = 0,  /* *out holds the file and a NUL; *len its length */
    HARK__FILE_NO_OPEN,   /* it could not be opened: errno says why */
    HARK__FILE_NO_READ,   /* it opened but could not be read (a directory): errno says why */
    HARK__FILE_TOO_LARGE, /* it holds more than `max` bytes */
    HARK__FILE_NO_MEMORY
} hark__file_read_status;

/*
 * Reads the file `path` whole into *out (hark__malloc'd, NUL-terminated; free it with
 * hark__free(), wiping it first if it may hold a key). On failure nothing is kept,
 * and what was read is wiped first: the file may hold a key. Records nothing for
 * hark_error_last(): the caller's message names the setting the path came from.
 */
hark__file_read_status hark__file_read(char **out, size_t *len, const char *path, size_t max);

#endif /* HARK_EXPORT_FILE_READ_H */
