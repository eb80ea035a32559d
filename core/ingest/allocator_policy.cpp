// The allocator's policy (see the header).
#include "core/ingest/allocator_policy.hpp"

#include <malloc.h>

namespace msmon {

void return_large_blocks_to_the_os() {
#ifdef M_MMAP_THRESHOLD
    mallopt(M_MMAP_THRESHOLD, 1 << 20);  // a fixed threshold: glibc no longer raises it as blocks are freed
#endif
}

void trim_free_memory() {
#if defined(__GLIBC__)
    malloc_trim(0);  // ~1 ms a call on a 200 MB heap
#endif
}

}  // namespace msmon
