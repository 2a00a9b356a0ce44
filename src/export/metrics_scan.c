/*
 * Metrics in shared mode, the reading side: every process's file in the directory
 * mapped read-only, its published records picked for the snapshot to sum
 * (metrics_file.h has the format).
 *
 * A file's writer may be running, or may have crashed at any point: a record is
 * read only once its head is published (acquire), each counter is one 64-bit load,
 * and anything that does not add up -- a head past the end of the file, a kind not
 * known, a name without its NUL -- ends that file's walk, never the scrape.
 */
#include "metrics_file.h"
#include "alloc.h"
#include "error.h"
#include "grow.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void hark__metrics_view_free(struct hark__metrics_view *view)
{
    for (size_t i = 0; i < view->count; i++)
        munmap(view->maps[i].base, view->maps[i].size);
    hark__free(view->maps);
    memset(view, 0, sizeof *view);
}

/* The published records of one mapped file. */
static int walk(const unsigned char *base, size_t size, struct hark__metrics_pick **picks,
                size_t *count, size_t *capacity)
{
    size_t off = sizeof(struct hark__mfile_header);
    /* A head is 8 bytes: a padding record may be no more. */
    while (size - off >= sizeof(uint64_t)) {
        const struct hark__mfile_record *r = (const struct hark__mfile_record *)(base + off);
        /* Acquire: pairs with the writer's release of the head (hark__metrics_dir_record). */
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        size_t bytes = (size_t)(head & 0xffffffffu);
        unsigned kind = (unsigned)(head >> 32);
        if (!head || bytes % 8 || bytes < 8 || bytes > size - off)
            break;
        if (kind == HARK__MFILE_SERIES) {
            if (bytes < sizeof *r || r->name_len > HARK_NAME_MAX ||
                r->name_len >= bytes - sizeof *r || r->name[r->name_len] != '\0')
                break;
            int rc = HARK__GROW(*picks, *capacity, *count + 1, 64);
            if (rc != 0)
                return rc;
            (*picks)[(*count)++] = (struct hark__metrics_pick){r->name, &r->c};
        } else if (kind != HARK__MFILE_PAD) {
            break;
        }
        off += bytes;
    }
    return 0;
}

struct reading {
    uint64_t registry;
    struct hark__metrics_pick **picks;
    size_t *count, *capacity;
    struct hark__metrics_view *view;
};

/* One file: mapped whole, kept in the view when its header is one this library reads
 * and names the reader's registry. */
static int read_file(int fd, const char *name, void *data)
{
    (void)name;
    struct reading *r = data;
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < sizeof(struct hark__mfile_header))
        return 0;
    void *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED)
        return 0;
    int rc = 0;
    const struct hark__mfile_header *h = base;
    if (hark__metrics_header_check(h, (uint64_t)st.st_size) != NULL || h->registry != r->registry ||
        (rc = HARK__GROW(r->view->maps, r->view->capacity, r->view->count + 1, 16)) != 0) {
        munmap(base, (size_t)st.st_size);
        return rc; /* another format or registry is skipped; no memory ends the read */
    }
    r->view->maps[r->view->count++] = (struct hark__metrics_map){base, (size_t)st.st_size};
    return walk(base, (size_t)st.st_size, r->picks, r->count, r->capacity);
}

int hark__metrics_dir_read(const struct hark__metrics_dir *d, struct hark__metrics_pick **picks,
                           size_t *count, size_t *capacity, struct hark__metrics_view *view)
{
    struct reading r = {hark__metrics_dir_registry(d), picks, count, capacity, view};
    return hark__metrics_dir_each(hark__metrics_dir_path(d), read_file, &r);
}
