/* pdb.c - portable PDB reader: what is PDB-specific on top of the ECMA-335 metadata reader
 * (ecma_metadata.c: metadata root, streams, #Pdb, tables, heaps): the debugging tables Document,
 * MethodDebugInformation, LocalScope, LocalVariable and CustomDebugInformation read as document
 * names, sequence points, local scopes and async stepping information; one PDB per assembly per
 * runtime, found by pdb_find.c.
 *
 * Specs: ECMA-335 II.23.2 (compressed integers) and the Portable PDB format
 * (dotnet/runtime docs/design/specs/PortablePdb-Metadata.md). */
#define _FILE_OFFSET_BITS 64
#include "metadata/pdb.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/limits.h"
#include "metadata/ecma_metadata.h"
#include "metadata/pdb_find.h"
#include "metadata/signature.h"
#include "runtime/runtime.h"

/* CustomDebugInformation Kind of AsyncMethodSteppingInformation, {54FD2AC5-E925-401A-9C2A-F94F171072F8},
 * as its bytes are in the #GUID heap. */
static const uint8_t ASYNC_STEPPING_KIND[16] = {0xc5, 0x2a, 0xfd, 0x54, 0x25, 0xe9, 0x1a, 0x40,
                                                0x9c, 0x2a, 0xf9, 0x4f, 0x17, 0x10, 0x72, 0xf8};

struct adac_pdb {
	char *origin;
	struct adac_ecma *md;
	const uint8_t *id;                       /* the #Pdb stream's id (20 bytes, inside md) */
	char **doc_names;                        /* lazily joined document names, by row - 1 */
};

/* ------------------------------------------------------------------------------------------------
 * Metadata
 * ---------------------------------------------------------------------------------------------- */

static int corrupt(const struct adac_pdb *p, struct adac_error *err, const char *fmt, const char *what)
{
	return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: %s%s", p->origin, fmt, what ? what : "");
}

static uint32_t rows(const struct adac_pdb *p, unsigned table) { return adac_ecma_rows(p->md, table); }

/* Column `col` of row `rid` of a debugging table. */
static int cell(const struct adac_pdb *p, unsigned table, uint32_t rid, unsigned col, uint32_t *value,
                struct adac_error *err)
{
	if (adac_ecma_cell(p->md, table, rid, col, value, err) == 0)
		return 0;
	adac_error_wrap(err, "PDB %s: ", p->origin);
	return -1;
}

/* A #Blob entry as a cursor; -1 (nothing recorded) when the index or the entry is bad. */
static int get_blob(const struct adac_pdb *p, uint32_t index, struct adac_cursor *out)
{
	const uint8_t *b;
	uint32_t len;
	if (adac_ecma_blob(p->md, index, &b, &len, NULL) != 0)
		return -1;
	*out = adac_cursor_make(b, len);
	return 0;
}

/* ECMA-335 II.23.2 compressed unsigned integer; *width is its size in bytes (1, 2 or 4). */
static int read_cu(struct adac_cursor *c, uint32_t *out, unsigned *width)
{
	size_t pos = 0;
	if (adac_ecma_uncompress(c->p, adac_cursor_left(c), &pos, out) != 0)
		return -1;
	c->p += pos;
	*width = (unsigned)pos;
	return 0;
}

static int read_cu32(struct adac_cursor *c, uint32_t *out)
{
	unsigned w;
	return read_cu(c, out, &w);
}

/* Compressed signed integer: rotated, sign in bit 0, sign-extended from 6, 13 or 28 bits. */
static int read_cs32(struct adac_cursor *c, int32_t *out)
{
	uint32_t u;
	unsigned w;
	if (read_cu(c, &u, &w) != 0)
		return -1;
	int32_t v = (int32_t)(u >> 1);
	if (u & 1)
		v = (int32_t)((uint32_t)v | (w == 1 ? 0xffffffc0u : w == 2 ? 0xffffe000u : 0xf0000000u));
	*out = v;
	return 0;
}

/* A portable PDB: standalone debugging metadata (a #Pdb stream) with only debugging tables in #~. */
static int validate(const struct adac_pdb *p, struct adac_error *err)
{
	if (!p->id)
		return corrupt(p, err, "no #Pdb stream (not a portable PDB)", NULL);
	uint64_t type_system = adac_ecma_valid_mask(p->md) & ((1ull << ADAC_ECMA_DOCUMENT) - 1);
	if (type_system)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "PDB %s: metadata table 0x%02x in a PDB is not supported",
		                 p->origin, (unsigned)__builtin_ctzll(type_system));
	return 0;
}

struct adac_pdb *adac_pdb_open_image(const uint8_t *data, size_t len, const char *origin, struct adac_error *err)
{
	struct adac_pdb *p = calloc(1, sizeof *p);
	if (!p || !(p->origin = strdup(origin ? origin : "(memory)"))) {
		free(p);
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for a PDB");
		return NULL;
	}
	if (adac_ecma_open_blob(data, len, &p->md, err) != 0) {
		adac_error_wrap(err, "PDB %s: ", p->origin);
		adac_pdb_close(p);
		return NULL;
	}
	p->id = adac_ecma_pdb_id(p->md);
	if (validate(p, err) != 0) {
		adac_pdb_close(p);
		return NULL;
	}
	return p;
}

void adac_pdb_close(struct adac_pdb *p)
{
	if (!p)
		return;
	if (p->doc_names)
		for (uint32_t i = 0; i < rows(p, ADAC_ECMA_DOCUMENT); i++)
			free(p->doc_names[i]);
	free(p->doc_names);
	adac_ecma_free(p->md);
	free(p->origin);
	free(p);
}

const char *adac_pdb_origin(const struct adac_pdb *p) { return p->origin; }
const uint8_t *adac_pdb_id(const struct adac_pdb *p) { return p->id; }
uint32_t adac_pdb_method_count(const struct adac_pdb *p) { return rows(p, ADAC_ECMA_METHODDEBUGINFORMATION); }
uint32_t adac_pdb_document_count(const struct adac_pdb *p) { return rows(p, ADAC_ECMA_DOCUMENT); }

/* Document name blob: a separator byte, then parts, each a compressed #Blob index of UTF-8 text. */
const char *adac_pdb_document_name(struct adac_pdb *p, uint32_t doc, struct adac_error *err)
{
	uint32_t n = rows(p, ADAC_ECMA_DOCUMENT);
	if (doc == 0 || doc > n) {
		adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: document %u does not exist (%u documents)", p->origin, doc, n);
		return NULL;
	}
	if (!p->doc_names && !(p->doc_names = calloc(n, sizeof *p->doc_names))) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for PDB document names");
		return NULL;
	}
	if (p->doc_names[doc - 1])
		return p->doc_names[doc - 1];
	struct adac_cursor c;
	uint32_t name_blob;
	uint8_t sep;
	if (cell(p, ADAC_ECMA_DOCUMENT, doc, 0, &name_blob, err) != 0)
		return NULL;
	if (get_blob(p, name_blob, &c) != 0 || adac_cursor_u8(&c, &sep) != 0) {
		corrupt(p, err, "bad document name blob", NULL);
		return NULL;
	}
	size_t cap = 64, len = 0;
	char *name = malloc(cap);
	bool first = true;
	while (name && adac_cursor_left(&c) > 0) {
		uint32_t part;
		struct adac_cursor pc;
		if (read_cu32(&c, &part) != 0 || get_blob(p, part, &pc) != 0) {
			free(name);
			corrupt(p, err, "bad document name part", NULL);
			return NULL;
		}
		size_t need = len + adac_cursor_left(&pc) + 2;
		if (need > ADAC_MAX_PATH_BYTES) {
			free(name);
			adac_fail(err, ADAC_E_LIMIT, 0, "PDB %s: document %u name is longer than ADAC_MAX_PATH_BYTES (%u)",
			          p->origin, doc, ADAC_MAX_PATH_BYTES);
			return NULL;
		}
		if (need > cap) {
			char *nn = realloc(name, cap = need * 2);
			if (!nn) {
				free(name);
				name = NULL;
				break;
			}
			name = nn;
		}
		if (!first && sep)
			name[len++] = (char)sep;
		memcpy(name + len, pc.p, adac_cursor_left(&pc));
		len += adac_cursor_left(&pc);
		first = false;
	}
	if (!name) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for a PDB document name");
		return NULL;
	}
	name[len] = '\0';
	p->doc_names[doc - 1] = name;
	return name;
}

static int method_rid(const struct adac_pdb *p, uint32_t token, uint32_t *rid, struct adac_error *err)
{
	*rid = token & 0xffffff;
	if ((token >> 24) != ADAC_ECMA_METHODDEF || *rid == 0)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "0x%08x is not a MethodDef token", token);
	uint32_t n = rows(p, ADAC_ECMA_METHODDEBUGINFORMATION);
	if (*rid > n)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "PDB %s has no method 0x%08x (%u methods)", p->origin, token, n);
	return 0;
}

/* Sequence points blob (Portable PDB spec): header LocalSignature, [InitialDocument when the row's
 * Document is nil]; records: first a sequence-point record whose δILOffset is the IL offset; then
 * document records (δILOffset 0, Document) and sequence-point records (δILOffset > 0, ΔLines,
 * ΔColumns signed when ΔLines != 0; a hidden point has ΔLines = ΔColumns = 0; else StartLine and
 * StartColumn, unsigned for the first non-hidden point and signed deltas from the previous one). */
int adac_pdb_sequence_points(struct adac_pdb *p, uint32_t token, struct adac_seq_point **points, size_t *n,
                             struct adac_error *err)
{
	*points = NULL;
	*n = 0;
	uint32_t rid;
	if (method_rid(p, token, &rid, err) != 0)
		return -1;
	uint32_t doc, bi;
	if (cell(p, ADAC_ECMA_METHODDEBUGINFORMATION, rid, 0, &doc, err) != 0 ||
	    cell(p, ADAC_ECMA_METHODDEBUGINFORMATION, rid, 1, &bi, err) != 0)
		return -1;
	if (bi == 0)
		return 0;
	struct adac_cursor c;
	if (get_blob(p, bi, &c) != 0)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: method 0x%08x: bad sequence points blob index", p->origin,
		                 token);
	uint32_t localsig;
	if (read_cu32(&c, &localsig) != 0 || (doc == 0 && read_cu32(&c, &doc) != 0))
		return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: method 0x%08x: truncated sequence points header",
		                 p->origin, token);
	/* Each record takes at least 2 bytes: an upper bound for the array. */
	size_t cap = adac_cursor_left(&c) / 2 + 1;
	struct adac_seq_point *sp = calloc(cap, sizeof *sp);
	if (!sp)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for sequence points");
	size_t count = 0;
	uint64_t il = 0;
	int64_t prev_line = -1, prev_col = -1;
	const char *bad = NULL;
	while (adac_cursor_left(&c) > 0) {
		uint32_t delta;
		if (read_cu32(&c, &delta) != 0) {
			bad = "truncated record";
			break;
		}
		if (count > 0 && delta == 0) {
			if (read_cu32(&c, &doc) != 0) {
				bad = "truncated document record";
				break;
			}
			continue;
		}
		il = count == 0 ? delta : il + delta;
		uint32_t dlines;
		int32_t dcols;
		uint32_t ucols;
		if (read_cu32(&c, &dlines) != 0) {
			bad = "truncated record";
			break;
		}
		if (dlines == 0) {
			if (read_cu32(&c, &ucols) != 0) {
				bad = "truncated record";
				break;
			}
			dcols = (int32_t)ucols;
		} else if (read_cs32(&c, &dcols) != 0) {
			bad = "truncated record";
			break;
		}
		if (il > UINT32_MAX || count == cap) {
			bad = "IL offset overflows";
			break;
		}
		struct adac_seq_point *s = &sp[count];
		s->il_offset = (uint32_t)il;
		s->document = doc;
		if (dlines == 0 && dcols == 0) {
			s->start_line = s->end_line = ADAC_PDB_HIDDEN_LINE;
			count++;
			continue;
		}
		int64_t line, col;
		if (prev_line < 0) {
			uint32_t l, cc;
			if (read_cu32(&c, &l) != 0 || read_cu32(&c, &cc) != 0) {
				bad = "truncated record";
				break;
			}
			line = l;
			col = cc;
		} else {
			int32_t dl, dc;
			if (read_cs32(&c, &dl) != 0 || read_cs32(&c, &dc) != 0) {
				bad = "truncated record";
				break;
			}
			line = prev_line + dl;
			col = prev_col + dc;
		}
		int64_t eline = line + dlines, ecol = col + dcols;
		if (line < 0 || line >= 0x20000000 || eline >= 0x20000000 || col < 0 || col >= 0x10000 || ecol < 0 ||
		    ecol >= 0x10000) {
			bad = "line or column out of range";
			break;
		}
		prev_line = line;
		prev_col = col;
		s->start_line = (uint32_t)line;
		s->start_column = (uint32_t)col;
		s->end_line = (uint32_t)eline;
		s->end_column = (uint32_t)ecol;
		count++;
	}
	if (bad) {
		free(sp);
		return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: method 0x%08x: sequence point %zu: %s", p->origin, token,
		                 count, bad);
	}
	*points = sp;
	*n = count;
	return 0;
}

int adac_pdb_find_line(struct adac_pdb *p, uint32_t token, uint32_t il_offset, struct adac_source_line *out,
                       struct adac_error *err)
{
	struct adac_seq_point *sp;
	size_t n;
	if (adac_pdb_sequence_points(p, token, &sp, &n, err) != 0)
		return -1;
	const struct adac_seq_point *best = NULL;
	for (size_t i = 0; i < n; i++)
		if (sp[i].start_line != ADAC_PDB_HIDDEN_LINE && sp[i].il_offset <= il_offset &&
		    (!best || sp[i].il_offset >= best->il_offset))
			best = &sp[i];
	int rc = 0;
	if (!best) {
		rc = adac_fail(err, ADAC_E_NOT_FOUND, 0, "PDB %s has no sequence point for method 0x%08x at IL 0x%x",
		               p->origin, token, il_offset);
	} else {
		out->file = adac_pdb_document_name(p, best->document, err);
		out->line = best->start_line;
		out->column = best->start_column;
		if (!out->file)
			rc = -1;
	}
	free(sp);
	return rc;
}


/* LocalScope rows are sorted by Method, then StartOffset, then Length descending (outer first). */
struct scope_walk {
	const struct adac_pdb *p;
	adac_pdb_local_cb cb;
	void *ctx;
	struct adac_error *err;
};

/* One LocalScope row: its variables are the LocalVariable rows from its VariableList up to the next
 * row's (or the end of the table). Returns 1 when the callback asked to stop. */
static int walk_scope(void *ctx, uint32_t s)
{
	struct scope_walk *w = ctx;
	const struct adac_pdb *p = w->p;
	const unsigned LS = ADAC_ECMA_LOCALSCOPE, LV = ADAC_ECMA_LOCALVARIABLE;
	uint32_t nvars = rows(p, LV), first, end = nvars + 1, start, length;
	if (cell(p, LS, s, 2, &first, w->err) != 0 || (s < rows(p, LS) && cell(p, LS, s + 1, 2, &end, w->err) != 0) ||
	    cell(p, LS, s, 4, &start, w->err) != 0 || cell(p, LS, s, 5, &length, w->err) != 0)
		return -1;
	if (first == 0 || first > end || end > nvars + 1 || length > UINT32_MAX - start)
		return adac_fail(w->err, ADAC_E_CORRUPT, 0, "PDB %s: local scope %u has a bad variable list", p->origin, s);
	for (uint32_t v = first; v < end; v++) {
		uint32_t attributes, index, name_index;
		const char *name;
		if (cell(p, LV, v, 0, &attributes, w->err) != 0 || cell(p, LV, v, 1, &index, w->err) != 0 ||
		    cell(p, LV, v, 2, &name_index, w->err) != 0)
			return -1;
		if (adac_ecma_string(p->md, name_index, &name, NULL) != 0)
			return adac_fail(w->err, ADAC_E_CORRUPT, 0, "PDB %s: local variable %u has a bad name", p->origin, v);
		if (w->cb(w->ctx, start, start + length, (uint16_t)index, (uint16_t)attributes, name))
			return 1;
	}
	return 0;
}

int adac_pdb_locals(struct adac_pdb *p, uint32_t token, adac_pdb_local_cb cb, void *ctx, struct adac_error *err)
{
	uint32_t rid;
	if (method_rid(p, token, &rid, err) != 0)
		return -1;
	struct scope_walk w = {p, cb, ctx, err};
	return adac_ecma_each_row(p->md, ADAC_ECMA_LOCALSCOPE, 0, rid, walk_scope, &w, err) < 0 ? -1 : 0;
}

struct name_query {
	uint32_t index, il;
	const char *found;
};

static int find_name(void *ctx, uint32_t start, uint32_t end, uint16_t index, uint16_t attributes, const char *name)
{
	(void)attributes;
	struct name_query *q = ctx;
	if (index == q->index && q->il >= start && q->il < end)
		q->found = name; /* later scopes are inner: keep the last */
	return 0;
}

const char *adac_pdb_local_name_at(struct adac_pdb *p, uint32_t token, uint32_t index, uint32_t il_offset,
                                   struct adac_error *err)
{
	struct name_query q = {index, il_offset, NULL};
	if (adac_pdb_locals(p, token, find_name, &q, err) != 0)
		return NULL;
	return q.found;
}

/* AsyncMethodSteppingInformation (Portable PDB spec, C# and VB compilers), on the MoveNext method:
 * catch-handler-offset (uint32: the offset + 1, 0 when none), then per await (yield-offset uint32,
 * resume-offset uint32, resume-method compressed MethodDef row id), in the compiler's await order. */
struct kind_query {
	const struct adac_pdb *p;
	uint32_t rid;
	struct adac_error *err;
};

static int match_async_kind(void *ctx, uint32_t rid)
{
	struct kind_query *q = ctx;
	uint32_t g;
	uint8_t guid[16];
	if (cell(q->p, ADAC_ECMA_CUSTOMDEBUGINFORMATION, rid, 1, &g, q->err) != 0)
		return -1;
	if (adac_ecma_guid(q->p->md, g, guid, NULL) != 0)
		return adac_fail(q->err, ADAC_E_CORRUPT, 0, "PDB %s: custom debug information %u has a bad Kind", q->p->origin,
		                 rid);
	if (memcmp(guid, ASYNC_STEPPING_KIND, sizeof guid) != 0)
		return 0;
	q->rid = rid;
	return 1;
}

int adac_pdb_async_steps(struct adac_pdb *p, uint32_t token, uint32_t *catch_handler, struct adac_pdb_async_step **steps,
                         size_t *n, struct adac_error *err)
{
	*steps = NULL;
	*n = 0;
	uint32_t rid, value;
	if (method_rid(p, token, &rid, err) != 0)
		return -1;
	struct kind_query q = {p, 0, err};
	if (adac_ecma_each_row(p->md, ADAC_ECMA_CUSTOMDEBUGINFORMATION, 0, token, match_async_kind, &q, err) < 0)
		return -1;
	if (!q.rid)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "PDB %s has no async stepping information for method 0x%08x",
		                 p->origin, token);
	struct adac_cursor c;
	uint32_t handler;
	if (cell(p, ADAC_ECMA_CUSTOMDEBUGINFORMATION, q.rid, 2, &value, err) != 0)
		return -1;
	if (get_blob(p, value, &c) != 0 || adac_cursor_u32(&c, &handler) != 0)
		return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: method 0x%08x: bad async stepping information", p->origin,
		                 token);
	/* Each await takes at least 9 bytes: an upper bound for the array. */
	size_t cap = adac_cursor_left(&c) / 9 + 1, count = 0;
	struct adac_pdb_async_step *st = calloc(cap, sizeof *st);
	if (!st)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for async stepping information");
	while (adac_cursor_left(&c) > 0) {
		uint32_t method;
		if (count == cap || adac_cursor_u32(&c, &st[count].yield_offset) != 0 ||
		    adac_cursor_u32(&c, &st[count].resume_offset) != 0 || read_cu32(&c, &method) != 0 || method == 0 ||
		    method > 0xffffff) {
			free(st);
			return adac_fail(err, ADAC_E_CORRUPT, 0, "PDB %s: method 0x%08x: await %zu of the async stepping "
			                 "information is truncated or bad", p->origin, token, count);
		}
		st[count++].resume_method = ADAC_ECMA_TOKEN(ADAC_ECMA_METHODDEF, method);
	}
	*catch_handler = handler ? handler - 1 : ADAC_PDB_NO_CATCH_HANDLER;
	*steps = st;
	*n = count;
	return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Finding the PDB of an assembly (pdb_find.c)
 * ---------------------------------------------------------------------------------------------- */

static struct adac_pdb *open_found(int rc, struct adac_pdb_bytes *b, struct adac_error *err)
{
	struct adac_pdb *p = rc == 0 ? adac_pdb_open_image(b->data, b->len, b->origin, err) : NULL;
	adac_pdb_bytes_free(b);
	return p;
}

struct adac_pdb *adac_pdb_open_for_assembly(const char *assembly_path, struct adac_symbols *symbols,
                                            struct adac_error *err)
{
	struct adac_pdb_bytes b;
	return open_found(adac_pdb_find_file(assembly_path, symbols, &b, err), &b, err);
}

/* ------------------------------------------------------------------------------------------------
 * Per-runtime cache
 * ---------------------------------------------------------------------------------------------- */

struct pdb_entry {
	char *assembly;
	struct adac_pdb *pdb;      /* NULL: none; error says why */
	struct adac_error error;
};

struct pdb_state {
	struct pdb_entry *e;
	size_t n, cap;
	uint64_t symbols_generation;  /* the target's symbols the entries were looked for through */
};

static void drop_entries(struct pdb_state *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->e[i].assembly);
		adac_pdb_close(s->e[i].pdb);
	}
	s->n = 0;
}

static void state_free(void *ptr)
{
	struct pdb_state *s = ptr;
	if (!s)
		return;
	drop_entries(s);
	free(s->e);
	free(s);
}

/* After the target ran: the PDBs found stay (files on disk); a failed search is made again, as
 * the symbol path may have changed since. */
static bool state_keep(void *ptr)
{
	struct pdb_state *s = ptr;
	size_t kept = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->e[i].pdb)
			s->e[kept++] = s->e[i];
		else
			free(s->e[i].assembly);
	}
	s->n = kept;
	return true;
}

static struct adac_pdb *pdb_for(struct adac_runtime *rt, const char *assembly_path, struct adac_error *err)
{
	struct pdb_state *s = adac_runtime_slot(rt, ADAC_SLOT_PDB);
	if (!s) {
		if (!(s = calloc(1, sizeof *s))) {
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the PDB cache");
			return NULL;
		}
		adac_runtime_set_slot(rt, ADAC_SLOT_PDB, s, state_free);
		adac_runtime_set_slot_keep(rt, ADAC_SLOT_PDB, state_keep);
	}
	/* Other symbols (a kept runtime, the front end's symbol path changed): other PDBs, found or not. */
	uint64_t generation = rt->t ? adac_target_symbols_generation(rt->t) : 0;
	if (s->symbols_generation != generation) {
		drop_entries(s);
		s->symbols_generation = generation;
	}
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->e[i].assembly, assembly_path) != 0)
			continue;
		if (!s->e[i].pdb)
			adac_fail(err, s->e[i].error.code, 0, "%s", s->e[i].error.msg);
		return s->e[i].pdb;
	}
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16;
		struct pdb_entry *ne = realloc(s->e, ncap * sizeof *ne);
		if (!ne) {
			adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the PDB cache");
			return NULL;
		}
		s->e = ne;
		s->cap = ncap;
	}
	struct pdb_entry *e = &s->e[s->n];
	memset(e, 0, sizeof *e);
	if (!(e->assembly = strdup(assembly_path))) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the PDB cache");
		return NULL;
	}
	struct adac_pdb_bytes b;
	e->pdb = open_found(adac_pdb_find(rt, assembly_path, &b, &e->error), &b, &e->error);
	s->n++;
	if (!e->pdb)
		adac_fail(err, e->error.code, 0, "%s", e->error.msg);
	return e->pdb;
}

int adac_pdb_source_line(struct adac_runtime *rt, const char *assembly_path, uint32_t token, uint32_t il_offset,
                         struct adac_source_line *out, struct adac_error *err)
{
	struct adac_pdb *p = pdb_for(rt, assembly_path, err);
	if (!p)
		return -1;
	return adac_pdb_find_line(p, token, il_offset, out, err);
}

int adac_pdb_async_yield_offsets(struct adac_runtime *rt, const char *assembly_path, uint32_t movenext_token,
                                 uint32_t *yield_offsets, uint32_t max, uint32_t *n, struct adac_error *err)
{
	*n = 0;
	struct adac_pdb *p = pdb_for(rt, assembly_path, err);
	struct adac_pdb_async_step *steps;
	size_t count;
	uint32_t handler;
	if (!p || adac_pdb_async_steps(p, movenext_token, &handler, &steps, &count, err) != 0)
		return -1;
	for (size_t i = 0; i < count && i < max; i++)
		yield_offsets[i] = steps[i].yield_offset;
	*n = (uint32_t)count;
	free(steps);
	return 0;
}

const char *adac_pdb_local_name(struct adac_runtime *rt, const char *assembly_path, uint32_t token, uint32_t index,
                                uint32_t il_offset, struct adac_error *err)
{
	struct adac_pdb *p = pdb_for(rt, assembly_path, err);
	if (!p)
		return NULL;
	return adac_pdb_local_name_at(p, token, index, il_offset, err);
}
