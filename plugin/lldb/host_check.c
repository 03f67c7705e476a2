/* host_check.c - refuses to run inside an LLDB the plugin was not built for.
 *
 * The plugin links one liblldb (liblldb-22.so.1). Loaded by another LLDB (lldb-16 runs
 * liblldb-16.so.1), the dynamic linker brings in the plugin's liblldb as a second copy, never
 * initialised: the first SB call crashes LLDB. So PluginInitialize counts the liblldb objects
 * loaded before it calls anything: more than one means a foreign host. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* dl_iterate_phdr */
#endif
#include "host_check.h"

#include <link.h>
#include <stdio.h>
#include <string.h>

struct host {
	const char *own;    /* basename of the plugin's liblldb */
	char other[256];    /* basename of another one, "" if none */
};

/* "liblldb.so.1", "liblldb-22.so.1", "liblldb-16.so.1": LLDB itself, not its helper libraries
 * (liblldbIntelFeatures.so). */
static int is_liblldb(const char *base)
{
	if (strncmp(base, "liblldb", 7) != 0)
		return 0;
	return base[7] == '.' || base[7] == '-';
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int visit(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	struct host *h = ctx;
	const char *path = info->dlpi_name;
	if (!path || !*path || !is_liblldb(base_name(path)) || strcmp(base_name(path), h->own) == 0)
		return 0;
	snprintf(h->other, sizeof h->other, "%s", base_name(path));
	return 1;
}

int adac_lldb_host_check(const char *own, char *msg, size_t size)
{
	struct host h = {base_name(own), ""};
	dl_iterate_phdr(visit, &h);
	if (!h.other[0])
		return 0;
	snprintf(msg, size,
	         "asyncdac: this plugin is built for the LLDB of %s, but this LLDB runs %s: load it into the "
	         "LLDB it was built for",
	         h.own, h.other);
	return -1;
}
