// Bytes currently allocated by malloc, for the benchmarks' memory figure.
#include <stddef.h>

size_t storable_config_allocated_bytes(void);
