/* sort.h - qsort, skipped when the elements are already in order (as a heap walk lists objects). */
#ifndef ADAC_SORT_H
#define ADAC_SORT_H

#include <stdbool.h>
#include <stddef.h>

/* Sorts n elements of `size` bytes by cmp (qsort's) unless they are in order already (equal
 * neighbours allowed). True when they were in strictly increasing order, hence distinct: a caller
 * that needs distinct elements removes duplicates only when it returns false. */
bool adac_sort_if_needed(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
