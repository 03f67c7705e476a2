/* sort.c - sorting what mostly comes in order: left alone when it is, merged when it is a few
 * ordered runs put end to end (a heap walk's parts, chains then boxes), else qsort. */
#include "base/sort.h"

#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 16u   /* more runs than this: qsort */

/* Merges the ordered runs [a, b) and [b, c) of `base` (elements of `size` bytes) through tmp;
 * equal elements keep their order. */
static void merge(char *base, size_t a, size_t b, size_t c, size_t size, char *tmp,
                  int (*cmp)(const void *, const void *))
{
	size_t i = a, j = b, k = 0;
	while (i < b && j < c) {
		const char *x = base + i * size, *y = base + j * size;
		if (cmp(y, x) < 0) {
			memcpy(tmp + k * size, y, size);
			j++;
		} else {
			memcpy(tmp + k * size, x, size);
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
	size_t start[MAX_RUNS + 1], runs = 1;
	bool strict = true;
	start[0] = 0;
	for (size_t i = 1; i < n; i++) {
		int c = cmp(p + (i - 1) * size, p + i * size);
		if (c > 0) {
			if (runs == MAX_RUNS) {
				qsort(base, n, size, cmp);
				return false;
			}
			start[runs++] = i;
		}
		strict = strict && c < 0;
	}
	if (runs == 1)
		return strict;
	char *tmp = malloc(n * size);
	if (!tmp) {
		qsort(base, n, size, cmp);
		return false;
	}
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
	return false;
}
