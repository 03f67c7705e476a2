/* sort.h - sorting what mostly comes in order (as a heap walk lists objects): skipped when it is,
 * a merge of its runs when it is ordered runs end to end, else qsort. */
#ifndef ADAC_SORT_H
#define ADAC_SORT_H

#include <stdbool.h>
#include <stddef.h>

/* Sorts n elements of `size` bytes by cmp (qsort's) unless they are in order already (equal
 * neighbours allowed); ordered runs of 64 elements or more on average (or up to 64 runs) are
 * merged (equal elements keep their order), shorter ones are left to qsort. True when they were in
 * strictly increasing order, hence distinct: a caller that needs distinct elements removes
 * duplicates only when it returns false. */
bool adac_sort_if_needed(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
