/* A small file the user names, read whole (file_read.h). */
#include "file_read.h"
#include "alloc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

hark__file_read_status hark__file_read(char **out, size_t *len, const char *path, size_t max)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return HARK__FILE_NO_OPEN;
    char *buf = hark__malloc(max + 1);
    if (!buf) {
        fclose(f);
        return HARK__FILE_NO_MEMORY;
    }
    size_t n = fread(buf, 1, max, f);
    int read_errno = ferror(f) ? errno : 0;
    bool more = !read_errno && n == max && fgetc(f) != EOF;
    fclose(f);
    if (read_errno || more) {
        memset(buf, 0, n); /* it may be a key */
        hark__free(buf);
        errno = read_errno;
        return read_errno ? HARK__FILE_NO_READ : HARK__FILE_TOO_LARGE;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return HARK__FILE_READ;
}
