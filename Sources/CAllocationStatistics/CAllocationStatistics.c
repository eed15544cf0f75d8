#include "CAllocationStatistics.h"

#if defined(__linux__)
#include <malloc.h>
size_t storable_config_allocated_bytes(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    return mallinfo2().uordblks;
#else
    return (size_t)mallinfo().uordblks;
#endif
}
#elif defined(__APPLE__)
#include <malloc/malloc.h>
size_t storable_config_allocated_bytes(void) {
    malloc_statistics_t statistics;
    malloc_zone_statistics(NULL, &statistics);
    return statistics.size_in_use;
}
#else
size_t storable_config_allocated_bytes(void) { return 0; }
#endif
