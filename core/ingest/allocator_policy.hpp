// How the process's allocator gives memory back: ingest hands ~10 MB batches from the reading thread to the writer's,
// and glibc's default raises its mmap threshold to the size of the largest block freed, after which such blocks come
// from the arenas and stay resident once freed (a 64-rank backlog in msmon-tui: 250 MB peak RSS with 230 MB in use).
#pragma once

namespace msmon {

// Blocks of 1 MiB and more are mapped and unmapped on their own: freed, they leave the resident set at once.
// Called first thing in main() by the programs that ingest.
void return_large_blocks_to_the_os();

// Gives the arenas' free pages back (glibc's malloc_trim): for a long read that frees as much as it allocates.
void trim_free_memory();

}  // namespace msmon
