/* The bounded slot queue (queue.h). */
#include "queue.h"

#include "alloc.h"

#include <stdlib.h>
#include <string.h>

bool hark__otlp_queue_init(hark__otlp_queue *q, size_t count, size_t bytes)
{
    memset(q, 0, sizeof *q);
    q->slot_size = (HARK__Q_DATA + bytes + 63) & ~(size_t)63;
    q->mask = count - 1;
    q->slots = hark__calloc_lines(count * q->slot_size);
    if (!q->slots)
        return false;
    for (size_t i = 0; i < count; i++)
        atomic_init(hark__q_seq(q, i), i);
    atomic_init(&q->head, 0);
    atomic_init(&q->dropped, 0);
    return true;
}

void hark__otlp_queue_free(hark__otlp_queue *q)
{
    hark__free_lines(q->slots);
    q->slots = NULL;
}
