// Small primitives for StorableConfig's hot paths, as static inline C so that Swift inlines them on every
// platform (Synchronization's Atomic and Mutex need macOS 15 / iOS 18).
#ifndef STORABLE_CONFIG_SUPPORT_H
#define STORABLE_CONFIG_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t storable_config_atomic_load(uint32_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

static inline uint32_t storable_config_atomic_add(uint32_t *word, int32_t delta) {
    return __atomic_add_fetch(word, (uint32_t)delta, __ATOMIC_ACQ_REL);
}

/// How deep the current thread is inside the framework's locks, and whether it holds back reports or
/// announcements for when it leaves them (see OutsideLocks.swift). C thread-locals, because every write
/// enters and leaves, and a pthread key costs a call each time.
/// On Linux in the initial-exec model: an offset from the thread pointer, not a call to `__tls_get_addr` on
/// every access (eight bytes fit in the static TLS that glibc keeps for libraries loaded later).
#if defined(__linux__)
#define STORABLE_CONFIG_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define STORABLE_CONFIG_TLS_MODEL
#endif
extern _Thread_local uint32_t storable_config_outside_locks_depth STORABLE_CONFIG_TLS_MODEL;
extern _Thread_local uint32_t storable_config_outside_locks_pending STORABLE_CONFIG_TLS_MODEL;

static inline uint32_t storable_config_outside_locks_enter(void) {
    return ++storable_config_outside_locks_depth;
}

static inline uint32_t storable_config_outside_locks_leave(void) {
    return --storable_config_outside_locks_depth;
}

static inline uint32_t storable_config_outside_locks_current_depth(void) {
    return storable_config_outside_locks_depth;
}

static inline uint32_t storable_config_outside_locks_has_pending(void) {
    return storable_config_outside_locks_pending;
}

static inline void storable_config_outside_locks_set_pending(uint32_t pending) {
    storable_config_outside_locks_pending = pending;
}

/// Set, once and for good, the first time the Observation framework files an access to a setting under a
/// tracking (withObservationTracking, SwiftUI); until then no one can be observing a setting through it, and
/// changes need not be announced to it (see ObservationSupport.swift).
extern uint32_t storable_config_observation_tracked;

static inline uint32_t storable_config_observation_is_tracked(void) {
    return __atomic_load_n(&storable_config_observation_tracked, __ATOMIC_ACQUIRE);
}

static inline void storable_config_observation_set_tracked(void) {
    if (__atomic_load_n(&storable_config_observation_tracked, __ATOMIC_RELAXED) == 0) {
        __atomic_store_n(&storable_config_observation_tracked, 1, __ATOMIC_RELEASE);
    }
}

/// The bytes of stack left to the calling thread below the caller's frame, or SIZE_MAX where the platform does
/// not say; for code that recurses into values of any depth (see StackDepthGuard.swift).
size_t storable_config_stack_space_left(void);

#if defined(__linux__)
// A futex lock (Drepper, "Futexes Are Tricky", mutex 2): 0 free, 1 held, 2 held with waiters. Taking a free
// lock is one compare-and-swap and releasing an uncontended one is one exchange, inlined; a thread that
// finds the lock held sleeps in the kernel, which knows who waits, and is woken by the unlock. It never
// spins.

void storable_config_futex_lock_contended(uint32_t *word);
void storable_config_futex_wake_one(uint32_t *word);

static inline void storable_config_futex_lock(uint32_t *word) {
    uint32_t expected = 0;
    if (__builtin_expect(
            __atomic_compare_exchange_n(word, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED), 1)) {
        return;
    }
    storable_config_futex_lock_contended(word);
}

static inline void storable_config_futex_unlock(uint32_t *word) {
    if (__builtin_expect(__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) == 2, 0)) {
        storable_config_futex_wake_one(word);
    }
}
#endif

#endif
