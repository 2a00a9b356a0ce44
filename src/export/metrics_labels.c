/*
 * Labelled series: one event name and label pairs recorded as one series, whose
 * name is the event name followed, for each pair, by HARK_METRICS_LABEL_SEP, the
 * label name, '=' and the value (hark/metrics.h). Built on hark_metrics_record(),
 * so recording, shards and snapshots are those of any series; the writers split
 * the name again (hark__metrics_series_event(), hark__metrics_series_label()).
 */
#include "metrics_internal.h"
#include "prom_internal.h"
#include "error.h"

#include <math.h>
#include <string.h>

/* Appends `n` bytes of `s` to key[*len..], a separator byte turned into a space;
 * returns false when they do not all fit (what fits is kept, cut at a character). */
static bool append(char *key, size_t *len, const char *s, size_t n)
{
    size_t room = HARK_NAME_MAX - *len;
    bool whole = n <= room;
    if (!whole) {
        n = room;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) /* not inside a character */
            n--;
    }
    for (size_t i = 0; i < n; i++)
        key[*len + i] = s[i] == HARK_METRICS_LABEL_SEP ? ' ' : s[i];
    *len += n;
    return whole;
}

int hark_metrics_record_labelled(hark_metrics *m, const char *name, const char *const *labels,
                                 size_t label_count, double seconds)
{
    if (!m || !name || !*name || (label_count && !labels))
        return hark__error(HARK_EINVAL, "hark_metrics_record_labelled: %s",
                           !m       ? "the metrics object is NULL"
                           : !name  ? "the name is NULL"
                           : !*name ? "the name is empty"
                                    : "labels is NULL with a count");
    if (label_count > HARK_METRICS_LABELS_MAX)
        return hark__error(HARK_ELIMIT, "hark_metrics_record_labelled: %zu labels, more than %d",
                           label_count, HARK_METRICS_LABELS_MAX);
    size_t name_len = strlen(name);
    if (name_len > HARK_NAME_MAX || memchr(name, HARK_METRICS_LABEL_SEP, name_len))
        return hark__error(HARK_EINVAL, "hark_metrics_record_labelled: the name is %s",
                           name_len > HARK_NAME_MAX ? "longer than HARK_NAME_MAX"
                                                    : "holding HARK_METRICS_LABEL_SEP");
    char key[HARK_NAME_MAX + 1];
    memcpy(key, name, name_len);
    size_t len = name_len;
    for (size_t i = 0; i < label_count; i++) {
        const char *k = labels[2 * i], *v = labels[2 * i + 1];
        if (!hark__prom_valid_name(k, false) || !strcmp(k, "event") || !strcmp(k, "le") ||
            !strncmp(k, "__", 2))
            return hark__error(HARK_EINVAL,
                               "hark_metrics_record_labelled: labels[%zu]: \"%s\" is not a label "
                               "name ([a-zA-Z_][a-zA-Z0-9_]*, not event, le or __...)",
                               2 * i, k ? k : "(null)");
        /* A label name twice in one series makes Prometheus refuse the whole scrape. */
        for (size_t j = 0; j < i; j++)
            if (!strcmp(k, labels[2 * j]))
                return hark__error(HARK_EINVAL,
                                   "hark_metrics_record_labelled: label \"%s\" is given twice", k);
        /* The name whole or not at all: a value cut short still names its label. */
        if (len + 2 + strlen(k) > HARK_NAME_MAX)
            break;
        key[len++] = HARK_METRICS_LABEL_SEP;
        append(key, &len, k, strlen(k));
        key[len++] = '=';
        if (v && !append(key, &len, v, strlen(v)))
            break;
    }
    key[len] = '\0';
    return hark_metrics_record(m, key, seconds);
}
