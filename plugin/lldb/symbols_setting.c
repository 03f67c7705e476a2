/* symbols_setting.c - the symbol path from LLDB's settings and the environment. */
#include "symbols_setting.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncdac.h"
#include "shim.h"

/* LLDB keeps the list as file paths and collapses the "//" of a URL (srv*CACHE*http:/host/x): put
 * it back for the schemes a symbol server may have. */
static void restore_urls(const char *entry, char *out, size_t size)
{
	static const char *const schemes[] = {"http:/", "https:/", "file:/"};
	size_t n = 0;
	for (const char *p = entry; *p && n + 3 < size;) {
		bool fixed = false;
		for (size_t i = 0; i < sizeof schemes / sizeof schemes[0] && !fixed; i++) {
			size_t len = strlen(schemes[i]);
			if (strncmp(p, schemes[i], len) == 0 && p[len] != '/' && (p == entry || p[-1] == '*')) {
				n += (size_t)snprintf(out + n, size - n, "%s/%s", schemes[i], schemes[i][0] == 'f' ? "/" : "");
				p += len;
				fixed = true;
			}
		}
		if (!fixed)
			out[n++] = *p++;
	}
	out[n < size ? n : size - 1] = '\0';
}

int adac_lldb_update_symbols(struct adac_lldb_cmd *cmd, struct adac_target *t, struct adac_error *err)
{
	char *list = adac_lldb_cmd_setting_list(cmd, "target.debug-file-search-paths");
	const char *env = getenv("ASYNCDAC_SYMBOL_PATH");
	size_t cap = (list ? 2 * strlen(list) : 0) + (env ? strlen(env) : 0) + 8;
	char *spec = malloc(cap);
	if (!spec) {
		free(list);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the symbol path");
	}
	size_t n = 0;
	spec[0] = '\0';
	for (char *line = list, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		*next++ = '\0';
		restore_urls(line, spec + n, cap - n - 1);
		n += strlen(spec + n);
		spec[n++] = ';';
		spec[n] = '\0';
	}
	free(list);
	snprintf(spec + n, cap - n, "%s", env ? env : "");
	/* Compared with the path this target has: the settings are global, the targets are many. */
	const struct adac_symbols *have = adac_target_symbols(t);
	if (have && strcmp(adac_symbols_spec(have), spec) == 0) {
		free(spec);
		return 0;
	}
	struct adac_symbols *s = adac_symbols_new(spec, err);
	free(spec);
	if (!s)
		return -1;
	adac_target_set_symbols(t, s);
	return 0;
}
