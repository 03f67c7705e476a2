/* adapter.h - the Python adapter's C entry point (adapter.c) and the `async threads` switch. */
#ifndef ADAC_LLDB_ADAPTER_H
#define ADAC_LLDB_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exported for ctypes (exports.map): a JSON request in, a JSON reply out (never NULL unless out of
 * memory), freed with asyncdac_lldb_free. */
__attribute__((visibility("default"))) char *asyncdac_lldb_call(const char *request);
__attribute__((visibility("default"))) void asyncdac_lldb_free(char *reply);

/* The plugin's C state (its targets, their caches) is used by one thread at a time: every entry
 * (a command, asyncdac_lldb_call) takes this lock, after the target's API lock (LLDB's SBMutex),
 * always in that order. Recursive: a command may run the frame provider, which calls back. */
void adac_lldb_lock(void);
void adac_lldb_unlock(void);

/* Whether the OS plugin shows pending chains as threads (`async threads enable`), and at most how
 * many (0: all; the rest are counted in one more thread). A thread list of 10,000 threads takes
 * LLDB 22 about 1.4 s; of a million, half a minute and 9 GB. */
#define ADAC_LLDB_CHAIN_THREADS_MAX 10000u
void adac_lldb_set_chain_threads(bool on, size_t max_threads);
bool adac_lldb_chain_threads(void);
size_t adac_lldb_chain_threads_max(void);

#ifdef __cplusplus
}
#endif

#endif
