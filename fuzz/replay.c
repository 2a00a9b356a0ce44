/*
 * Plain main() for the fuzz targets: feeds every file named on the command line
 * (directories are walked one level deep) to LLVMFuzzerTestOneInput once. Built with
 * any compiler, so CI replays the committed corpora on every run without libFuzzer,
 * and a crash file found by `make fuzz` can be replayed under gdb or valgrind.
 *
 *     fuzz_names_replay fuzz/corpus/fuzz_names [more files or directories]
 *
 * Exits 0 after replaying at least one input, 1 when nothing could be read.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return -1;
    }
    for (;;) {
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        if (got == 0)
            break;
        len += got;
    }
    fclose(f);
    /* An exact-size copy lets ASan and valgrind see reads past the input. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    if (len)
        memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int replay_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (replay_file(path) != 0)
            return -1;
        ++*count;
        return 0;
    }
    DIR *d = opendir(path);
    if (!d) {
        perror(path);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t n = strlen(path) + strlen(e->d_name) + 2;
        char *child = malloc(n);
        if (!child) {
            rc = -1;
            break;
        }
        snprintf(child, n, "%s/%s", path, e->d_name);
        struct stat cst;
        if (stat(child, &cst) == 0 && S_ISREG(cst.st_mode)) {
            if (replay_file(child) != 0)
                rc = -1;
            else
                ++*count;
        }
        free(child);
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 0, rc = 0;
    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i], &count) != 0)
            rc = 1;
    printf("replayed %d input%s\n", count, count == 1 ? "" : "s");
    return (rc != 0 || count == 0) ? 1 : 0;
}
