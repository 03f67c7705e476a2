/* grow.h - room for one more element in an array grown by doubling. */
#ifndef ADAC_GROW_H
#define ADAC_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* Makes *arr (elements of `elem` bytes, *cap of them) hold at least `need`: doubling from `first`.
 * 0, or -1 when memory runs out (or the size overflows); *arr and *cap are then unchanged. */
static inline int adac_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : first;
	while (n < need && n <= SIZE_MAX / 2)
		n *= 2;
	if (n < need || n > SIZE_MAX / elem)
		return -1;
	void *p = realloc(*arr, n * elem);
	if (!p)
		return -1;
	*arr = p;
	*cap = n;
	return 0;
}

#endif
