/* sort.c - sorting what mostly comes in order: left alone when it is, merged when it is ordered
 * runs put end to end (a heap walk's parts, chains then boxes, chains by their task's address
 * listed by their head's), else qsort. */
#include "base/sort.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

/* Runs are merged when they average this many elements or more (or are this few): else qsort. */
#define MIN_RUN 64u

/* The first index in [lo, hi) whose element is after key (> key when `after_equal`, else >= key). */
static size_t bound(const char *base, size_t lo, size_t hi, size_t size, const char *key, bool after_equal,
                    int (*cmp)(const void *, const void *))
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp(base + mid * size, key);
		if (c < 0 || (c == 0 && after_equal))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* One element: the common sizes as fixed-size copies the compiler inlines (a merge copies every
 * element it moves through tmp). */
static inline void copy_element(char *dst, const char *src, size_t size)
{
	switch (size) {
	case 8: memcpy(dst, src, 8); break;
	case 16: memcpy(dst, src, 16); break;
	case 24: memcpy(dst, src, 24); break;
	case 32: memcpy(dst, src, 32); break;
	default: memcpy(dst, src, size);
	}
}

/* Merges the ordered runs [a, b) and [b, c) of `base` (elements of `size` bytes) through tmp;
 * equal elements keep their order. Only where they overlap moves: the left run's elements up to
 * the right's first stay, as do the right's from the left's last on (runs that are nearly in
 * order cost a search each). */
static void merge(char *base, size_t a, size_t b, size_t c, size_t size, char *tmp,
                  int (*cmp)(const void *, const void *))
{
	a = bound(base, a, b, size, base + b * size, true, cmp);
	c = bound(base, b, c, size, base + (b - 1) * size, false, cmp);
	size_t i = a, j = b, k = 0;
	while (i < b && j < c) {
		const char *x = base + i * size, *y = base + j * size;
		if (cmp(y, x) < 0) {
			copy_element(tmp + k * size, y, size);
			j++;
		} else {
			copy_element(tmp + k * size, x, size);
			i++;
		}
		k++;
	}
	/* What is left of the second run is in place already. */
	memcpy(tmp + k * size, base + i * size, (b - i) * size);
	k += b - i;
	memcpy(base + a * size, tmp, k * size);
}

bool adac_sort_if_needed(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *p = base;
	size_t runs = 1;
	bool strict = true;
	for (size_t i = 1; i < n; i++) {
		int c = cmp(p + (i - 1) * size, p + i * size);
		runs += c > 0;
		strict = strict && c < 0;
	}
	if (runs == 1)
		return strict;
	size_t *start = runs <= MIN_RUN || runs <= n / MIN_RUN ? malloc((runs + 1) * sizeof *start) : NULL;
	char *tmp = start ? adac_array_new(n, size) : NULL;
	if (!tmp) {
		free(start);
		qsort(base, n, size, cmp);
		return false;
	}
	start[0] = 0;
	for (size_t i = 1, r = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0)
			start[r++] = i;
	/* Neighbouring runs merged pairwise until one is left. */
	start[runs] = n;
	while (runs > 1) {
		size_t kept = 0;
		for (size_t r = 0; r < runs; r += 2) {
			if (r + 1 < runs)
				merge(p, start[r], start[r + 1], start[r + 2], size, tmp, cmp);
			start[kept++] = start[r];
		}
		start[kept] = n;
		runs = kept;
	}
	free(tmp);
	free(start);
	return false;
}
