#include "CStorableConfigSupport.h"

// One lock per 64-byte cache line, so that neighbouring locks do not share a line between cores.
#define LOCK_COUNT 1024
#define WORDS_PER_LINE 16
static uint32_t pool[LOCK_COUNT * WORDS_PER_LINE] __attribute__((aligned(64)));
static uint32_t next_lock;

uint32_t *storable_config_pooled_spin_lock(void) {
    uint32_t index = __atomic_fetch_add(&next_lock, 1, __ATOMIC_RELAXED) % LOCK_COUNT;
    return &pool[index * WORDS_PER_LINE];
}
