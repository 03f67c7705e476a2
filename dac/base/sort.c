/* sort.c - qsort only when one look through the elements finds them out of order. */
#include "base/sort.h"

#include <stdlib.h>

bool adac_sort_if_needed(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *p = base;
	bool strict = true;
	for (size_t i = 1; i < n; i++) {
		int c = cmp(p + (i - 1) * size, p + i * size);
		if (c > 0) {
			qsort(base, n, size, cmp);
			return false;
		}
		strict = strict && c < 0;
	}
	return strict;
}
