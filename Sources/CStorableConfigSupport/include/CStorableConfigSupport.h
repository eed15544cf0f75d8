// Small lock-free primitives for StorableConfig's hot paths, as static inline C so that Swift inlines them
// on every platform (Synchronization's Atomic needs macOS 15 / iOS 18).
#ifndef STORABLE_CONFIG_SUPPORT_H
#define STORABLE_CONFIG_SUPPORT_H

#include <stdint.h>
#include <sched.h>

/// Takes a spin lock: an atomic exchange when free; when held, spins on reads and yields the processor
/// every 64 tries, so a preempted holder is not starved.
static inline void storable_config_spin_lock(uint32_t *word) {
    while (__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE) != 0) {
        unsigned spins = 0;
        while (__atomic_load_n(word, __ATOMIC_RELAXED) != 0) {
            if (++spins == 64) {
                sched_yield();
                spins = 0;
            }
        }
    }
}

/// Releases a spin lock taken by `storable_config_spin_lock`.
static inline void storable_config_spin_unlock(uint32_t *word) {
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);
}

static inline uint32_t storable_config_atomic_load(uint32_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

static inline uint32_t storable_config_atomic_add(uint32_t *word, int32_t delta) {
    return __atomic_add_fetch(word, (uint32_t)delta, __ATOMIC_ACQ_REL);
}

/// A spin lock from a fixed pool, handed out in turn: settings share 1,024 locks rather than each owning one.
uint32_t *storable_config_pooled_spin_lock(void);

#endif
