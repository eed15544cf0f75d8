#if defined(__linux__)
#define _GNU_SOURCE  // pthread_getattr_np
#endif
#include "CStorableConfigSupport.h"

#include <pthread.h>
#include <stddef.h>

_Thread_local uint32_t storable_config_outside_locks_depth STORABLE_CONFIG_TLS_MODEL = 0;
_Thread_local uint32_t storable_config_outside_locks_pending STORABLE_CONFIG_TLS_MODEL = 0;
uint32_t storable_config_observation_tracked = 0;

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void storable_config_futex_lock_contended(uint32_t *word) {
    // Mark the lock contended, so that its holder wakes someone on unlock, and sleep while it stays held.
    // The kernel sleeps only if the word is still 2, so a wake between the exchange and the wait is not lost.
    while (__atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) != 0) {
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    }
}

void storable_config_futex_wake_one(uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
#endif

// The lowest address of the calling thread's stack: 0 until first asked, 1 when it cannot be known. Not in the
// header's initial-exec model: asked only by coders of deeply nested values.
static _Thread_local uintptr_t storable_config_stack_low = 0;

size_t storable_config_stack_space_left(void) {
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (storable_config_stack_low == 0) {
        uintptr_t low = 1;
#if defined(__linux__)
        pthread_attr_t attributes;
        if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
            void *address = NULL;
            size_t size = 0;
            if (pthread_attr_getstack(&attributes, &address, &size) == 0 && address != NULL) {
                low = (uintptr_t)address;
            }
            pthread_attr_destroy(&attributes);
        }
#elif defined(__APPLE__)
        uintptr_t high = (uintptr_t)pthread_get_stackaddr_np(pthread_self());
        size_t size = pthread_get_stacksize_np(pthread_self());
        if (high > size) low = high - size;
#endif
        storable_config_stack_low = low;
    }
    if (storable_config_stack_low == 1 || here < storable_config_stack_low) return SIZE_MAX;
    return here - storable_config_stack_low;
}
