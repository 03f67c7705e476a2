/* proc_maps.c - the modules of a live process on this machine, from /proc/<pid>/maps: what the pid
 * backend lists, and what the LLDB backend lists for a process in a container, whose files LLDB
 * looked for on this machine (target.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/limits.h"
#include "target/target.h"

/* A file-backed mapping. */
struct mapping {
	uint64_t start, end, offset;
	char *path;
};

static int cmp_mapping_path(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;
	int r = strcmp(x->path, y->path);
	return r ? r : (x->start < y->start ? -1 : x->start > y->start);
}

/* The file-backed mappings of /proc/pid/maps. */
static int read_maps(int pid, struct mapping **out, size_t *count, struct adac_error *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return adac_fail(err, ADAC_E_IO, 0, "process %d: cannot read its mappings: %s", pid,
		                 errno == ENOENT ? "the process has exited" : strerror(errno));
	struct mapping *maps = NULL;
	size_t n = 0, cap = 0, lines = 0;
	char *line = NULL;
	size_t line_cap = 0;
	int rc = 0;
	while (getline(&line, &line_cap, f) > 0) {
		if (++lines > ADAC_MAX_MAPPINGS) {
			rc = adac_fail(err, ADAC_E_LIMIT, 0, "process %d: more than ADAC_MAX_MAPPINGS (%u) mappings", pid,
			               ADAC_MAX_MAPPINGS);
			break;
		}
		unsigned long long start, end, off;
		int at = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*x:%*x %*u %n", &start, &end, &off, &at) != 3 || at == 0)
			continue;
		char *file = line + at;
		file[strcspn(file, "\n")] = '\0';
		if (file[0] != '/' || end <= start)
			continue; /* anonymous memory, [heap], [stack], [vdso]... */
		if (adac_grow((void **)&maps, &cap, n + 1, sizeof *maps, 64) || !(maps[n].path = strdup(file))) {
			rc = adac_fail(err, ADAC_E_NOMEM, 0, "process %d: out of memory reading mappings", pid);
			break;
		}
		maps[n].start = start;
		maps[n].end = end;
		maps[n++].offset = off;
	}
	free(line);
	fclose(f);
	*out = maps;
	*count = n;
	return rc;
}

int adac_local_process_modules(int pid, struct adac_module **mods, size_t *count, struct adac_error *err)
{
	*mods = NULL;
	*count = 0;
	struct mapping *maps = NULL;
	size_t n = 0;
	int rc = read_maps(pid, &maps, &n, err);
	if (rc == 0 && n > 0 && !(*mods = calloc(n, sizeof **mods)))
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "process %d: out of memory listing modules", pid);
	if (rc == 0 && n > 0) {
		/* One module per mapped file: based at its offset-0 mapping, ending at its highest one. */
		qsort(maps, n, sizeof *maps, cmp_mapping_path);
		for (size_t i = 0; i < n;) {
			size_t j = i;
			uint64_t base = UINT64_MAX, end = 0;
			for (; j < n && strcmp(maps[j].path, maps[i].path) == 0; j++) {
				if (maps[j].offset == 0 && maps[j].start < base)
					base = maps[j].start;
				if (maps[j].end > end)
					end = maps[j].end;
			}
			if (base != UINT64_MAX) {
				struct adac_module *m = &(*mods)[(*count)++];
				m->path = maps[i].path;
				maps[i].path = NULL; /* moved */
				m->base = base;
				m->end = end;
			}
			i = j;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
	if (rc) {
		adac_local_modules_free(*mods, *count);
		*mods = NULL;
		*count = 0;
	}
	return rc;
}

void adac_local_modules_free(struct adac_module *mods, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(mods[i].path);
	free(mods);
}
