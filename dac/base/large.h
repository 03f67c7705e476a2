/* large.h - arrays that reach megabytes (a record per object at millions of objects), backed by
 * transparent huge pages where the system leaves them to be asked for (madvise mode, Debian's
 * default): one fault per 2 MiB instead of one per 4 KiB page. */
#ifndef ADAC_LARGE_H
#define ADAC_LARGE_H

#include <stddef.h>

/* As malloc, calloc and realloc; blocks of 2 MiB or more are advised for huge pages. */
void *adac_large_malloc(size_t bytes);
void *adac_large_calloc(size_t n, size_t elem);
void *adac_large_realloc(void *p, size_t bytes);

#endif
