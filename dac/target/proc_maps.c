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

/* The file-backed mappings of /proc/pid/maps. */
static int read_maps(int pid, struct adac_file_map **out, size_t *count, struct adac_error *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return adac_fail(err, ADAC_E_IO, 0, "process %d: cannot read its mappings: %s", pid,
		                 errno == ENOENT ? "the process has exited" : strerror(errno));
	struct adac_file_map *maps = NULL;
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
		char *copy = NULL;
		if (adac_grow((void **)&maps, &cap, n + 1, sizeof *maps, 64) || !(copy = strdup(file))) {
			rc = adac_fail(err, ADAC_E_NOMEM, 0, "process %d: out of memory reading mappings", pid);
			break;
		}
		maps[n++] = (struct adac_file_map){start, end, off, copy, 0};
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
	struct adac_file_map *maps = NULL;
	size_t n = 0;
	int rc = read_maps(pid, &maps, &n, err);
	/* (The kernel lists the mappings by address.) */
	int64_t nfiles = rc == 0 ? adac_file_maps_number(maps, n) : 0;
	uint64_t *base = nfiles > 0 ? calloc((size_t)nfiles, 2 * sizeof *base) : NULL;
	if (rc == 0 && nfiles != 0 && (nfiles < 0 || !base || !(*mods = calloc((size_t)nfiles, sizeof **mods))))
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "process %d: out of memory listing modules", pid);
	if (rc == 0 && nfiles > 0) {
		uint64_t *end = base + nfiles;
		adac_file_modules(maps, n, (size_t)nfiles, base, end);
		for (size_t i = 0; i < n; i++) {
			size_t f = maps[i].file;
			if (base[f] != maps[i].start)
				continue;
			(*mods)[(*count)++] = (struct adac_module){.path = (char *)maps[i].path, .base = base[f], .end = end[f]};
			maps[i].path = NULL; /* moved */
		}
	}
	for (size_t i = 0; i < n; i++)
		free((char *)maps[i].path);
	free(maps);
	free(base);
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
