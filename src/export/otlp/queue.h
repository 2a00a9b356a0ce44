/*
 * Internal: the bounded queue between instrumenting threads and the exporter's
 * worker -- a ring of fixed-size slots, many producers, one consumer (Vyukov's
 * bounded queue). A producer claims a slot with one compare-and-swap, fills it and
 * publishes it; a full ring refuses at once, so no producer ever waits.
 */
#ifndef HARK_OTLP_QUEUE_H
#define HARK_OTLP_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hark__otlp_queue {
    _Alignas(64) atomic_size_t head; /* next position to claim; = records claimed */
    _Alignas(64) size_t tail;        /* next position to read; the consumer's */
    atomic_uint_least64_t dropped;   /* refused because full */
    size_t mask;                     /* slots - 1 (a power of two) */
    size_t slot_size;                /* bytes per slot, the sequence word included */
    unsigned char *slots;
} hark__otlp_queue;

/* Offset of a slot's record past its sequence word. */
#define HARK__Q_DATA 8

/* Ring of `count` (a power of two) slots with `bytes` of record each. Returns
 * false on allocation failure. */
bool hark__otlp_queue_init(hark__otlp_queue *q, size_t count, size_t bytes);
void hark__otlp_queue_free(hark__otlp_queue *q);

static inline atomic_size_t *hark__q_seq(const hark__otlp_queue *q, size_t pos)
{
    return (atomic_size_t *)(void *)(q->slots + (pos & q->mask) * q->slot_size);
}

/* The record of the slot at `pos`. */
static inline void *hark__q_data(const hark__otlp_queue *q, size_t pos)
{
    return q->slots + (pos & q->mask) * q->slot_size + HARK__Q_DATA;
}

/* Claims a slot: its record (slot_size - HARK__Q_DATA bytes) and position, or NULL
 * when the ring is full (counted in `dropped`). */
static inline void *hark__q_claim(hark__otlp_queue *q, size_t *pos_out)
{
    size_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
    for (;;) {
        atomic_size_t *seq = hark__q_seq(q, pos);
        /* acquire: pairs with the consumer's release when it freed the slot; its
         * reads of the old record are done. */
        size_t s = atomic_load_explicit(seq, memory_order_acquire);
        intptr_t diff = (intptr_t)s - (intptr_t)pos;
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed))
                break;
        } else if (diff < 0) {
            atomic_fetch_add_explicit(&q->dropped, 1, memory_order_relaxed);
            return NULL;
        } else {
            pos = atomic_load_explicit(&q->head, memory_order_relaxed);
        }
    }
    *pos_out = pos;
    return hark__q_data(q, pos);
}

static inline void hark__q_publish(hark__otlp_queue *q, size_t pos)
{
    /* release: the record's bytes before the consumer's acquire of the sequence. */
    atomic_store_explicit(hark__q_seq(q, pos), pos + 1, memory_order_release);
}

/* The consumer's next record, or NULL when none is published yet. */
static inline void *hark__q_peek(hark__otlp_queue *q)
{
    atomic_size_t *seq = hark__q_seq(q, q->tail);
    /* acquire: pairs with the producer's publish. */
    if (atomic_load_explicit(seq, memory_order_acquire) != q->tail + 1)
        return NULL;
    return hark__q_data(q, q->tail);
}

static inline void hark__q_pop(hark__otlp_queue *q)
{
    /* release: our reads of the record before a producer reuses the slot. */
    atomic_store_explicit(hark__q_seq(q, q->tail), q->tail + q->mask + 1, memory_order_release);
    q->tail++;
}

#endif
