/* source_map.c - the source position of a native offset (see source_map.h for the rule). */
#include "code/source_map.h"

#include <string.h>

#include "code/debuginfo.h"
#include "types/methoddesc.h"
#include "types/names.h"

static struct adac_source_line line_of(const struct adac_source_map *m, uint32_t il)
{
	struct adac_source_line sl = {0};
	if (!m->path || adac_pdb_source_line(m->rt, m->path, m->token, il, &sl, NULL) != 0 ||
	    sl.line == ADAC_PDB_HIDDEN_LINE)
		memset(&sl, 0, sizeof sl);
	return sl;
}

void adac_source_map_init(struct adac_source_map *m, struct adac_runtime *rt, uint64_t method_desc,
                          const struct adac_debug_info *di)
{
	memset(m, 0, sizeof *m);
	m->rt = rt;
	m->di = di;
	struct adac_method_info mi;
	if (adac_md_read(rt, method_desc, &mi, NULL) != 0 || !mi.token)
		return;
	const char *path = adac_module_path(rt, mi.module, NULL);
	if (!path || !*path)
		return;
	m->path = path;
	m->token = mi.token;
	m->first = line_of(m, 0);
}

struct adac_source_line adac_source_map_own(const struct adac_source_map *m, uint32_t native_offset)
{
	struct adac_source_line none = {0};
	if (!m->di || !m->path)
		return none;
	uint32_t il = adac_debuginfo_il_offset(m->di, native_offset, NULL);
	if (il == ADAC_IL_PROLOG)
		return m->first;
	if (il == ADAC_IL_NO_MAPPING || il == ADAC_IL_EPILOG)
		return none;
	return line_of(m, il);
}

struct adac_source_line adac_source_map_at(const struct adac_source_map *m, uint32_t native_offset)
{
	struct adac_source_line none = {0};
	if (!m->di || !m->path)
		return none;
	/* The bounds at or before the offset, from the nearest back, until one has a line. */
	for (uint32_t off = native_offset, steps = 0; steps < m->di->num_bounds; steps++) {
		struct adac_source_line sl = adac_source_map_own(m, off);
		if (sl.line)
			return sl;
		uint32_t at = 0, prev = UINT32_MAX;
		for (uint32_t i = 0; i < m->di->num_bounds; i++)
			if (m->di->bounds[i].native_offset <= off && m->di->bounds[i].native_offset >= at)
				at = m->di->bounds[i].native_offset;
		for (uint32_t i = 0; i < m->di->num_bounds; i++)
			if (m->di->bounds[i].native_offset < at && (prev == UINT32_MAX || m->di->bounds[i].native_offset > prev))
				prev = m->di->bounds[i].native_offset;
		if (prev == UINT32_MAX)
			return none;
		off = prev;
	}
	return none;
}
