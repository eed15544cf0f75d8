#include "CStorableConfigSupport.h"

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
