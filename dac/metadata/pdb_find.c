/* pdb_find.c - the PDB of an assembly: identity from the assembly's CodeView entry, candidates
 * checked against it (Portable PDB spec: the #Pdb stream's id is the CodeView GUID and stamp). */
#define _FILE_OFFSET_BITS 64
#include "metadata/pdb_find.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/cursor.h"
#include "metadata/ecma_metadata.h"
#include "runtime/loader.h"
#include "runtime/runtime.h"
#include "target/pe_image.h"
#include "target/symbol_store.h"
#include "target/symbols.h"
#include "target/target.h"

#define MPDB_SIGNATURE 0x4244504du     /* "MPDB": an embedded portable PDB, then deflate */

/* ---- the assembly image, in the target or in a file ---- */

struct image {
	struct adac_pe_reader r;
	struct adac_target *t;  /* target image: t, base */
	uint64_t base;
	int fd;                 /* file image: fd, size */
	uint64_t size;
};

static int read_target(void *ctx, uint64_t off, void *buf, size_t len, struct adac_error *err)
{
	const struct image *im = ctx;
	return adac_read(im->t, im->base + off, buf, len, err);
}

static int read_file(void *ctx, uint64_t off, void *buf, size_t len, struct adac_error *err)
{
	const struct image *im = ctx;
	ssize_t n = off <= im->size ? pread(im->fd, buf, len, (off_t)off) : -1;
	if (n == (ssize_t)len)
		return 0;
	return adac_fail(err, ADAC_E_CORRUPT, 0, "cannot read %zu bytes at offset %llu", len, (unsigned long long)off);
}

static int identity(const struct image *im, struct adac_pe_debug *d, struct adac_error *err)
{
	struct adac_pe_headers h;
	return adac_pe_read_headers(&im->r, &h, err) || adac_pe_debug_info(&im->r, &h, d, err) ? -1 : 0;
}

/* ---- candidates ---- */

struct search {
	const char *assembly;              /* its file name, for messages */
	const struct adac_pe_debug *d;
	struct adac_pdb_bytes *out;
	char why[ADAC_ERROR_MSG_MAX];
	char beside[ADAC_MAX_PATH_BYTES];  /* the PDB beside the assembly, once refused (real path) */
};

static void hex_id(const uint8_t *id, char *out)
{
	for (int i = 0; i < 20; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
}

/* Takes data (an owned PDB image) if its id is the wanted one; else says why in why and frees it. */
static int take_if_matching(struct search *q, uint8_t *data, size_t len, const char *origin, char *why,
                            size_t why_size)
{
	struct adac_ecma *md = NULL;
	struct adac_error perr = {0};
	const uint8_t *id = NULL;
	if (adac_ecma_open_blob(data, len, &md, &perr) == 0)
		id = adac_ecma_pdb_id(md);
	char got[41], want[41];
	if (!id)
		snprintf(why, why_size, "is not a portable PDB%s%s", perr.code ? ": " : "", perr.msg);
	else if (!q->d->has_codeview)
		snprintf(why, why_size, "cannot be checked: %s has no CodeView entry", q->assembly);
	else if (memcmp(id, q->d->pdb_id, 20) != 0) {
		hex_id(id, got);
		hex_id(q->d->pdb_id, want);
		snprintf(why, why_size, "does not match it (PDB id %s, the assembly wants %s)", got, want);
	} else {
		adac_ecma_free(md);
		q->out->data = data;
		q->out->len = len;
		snprintf(q->out->origin, sizeof q->out->origin, "%s", origin);
		return 0;
	}
	adac_ecma_free(md);
	free(data);
	return -1;
}

/* A PDB file: read whole (capped), then checked. */
static int check_file(void *ctx, const char *path, char *why, size_t why_size)
{
	struct search *q = ctx;
	char real[PATH_MAX];
	if (q->beside[0] && realpath(path, real) && strcmp(real, q->beside) == 0)
		return -1; /* the one beside the assembly, refused already */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *data = NULL;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "cannot be read: %s", strerror(errno));
	} else if ((uint64_t)st.st_size > ADAC_MAX_PDB_BYTES) {
		snprintf(why, why_size, "has %lld bytes, more than ADAC_MAX_PDB_BYTES (%u)", (long long)st.st_size,
		         ADAC_MAX_PDB_BYTES);
	} else if (!(data = malloc((size_t)st.st_size ? (size_t)st.st_size : 1)) ||
	           pread(fd, data, (size_t)st.st_size, 0) != st.st_size) {
		snprintf(why, why_size, "cannot be read");
		free(data);
		data = NULL;
	}
	if (fd >= 0)
		close(fd);
	if (!data)
		return -1;
	return take_if_matching(q, data, (size_t)st.st_size, path, why, why_size);
}

static int try_beside(struct search *q, const char *assembly_path, const char *pdb_name)
{
	char path[ADAC_MAX_PATH_BYTES], why[ADAC_ERROR_MSG_MAX] = "";
	const char *slash = strrchr(assembly_path, '/');
	int dir = slash ? (int)(slash - assembly_path + 1) : 0;
	if (snprintf(path, sizeof path, "%.*s%s", dir, assembly_path, pdb_name) >= (int)sizeof path)
		return -1;
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (check_file(q, path, why, sizeof why) == 0)
		return 0;
	adac_note_add(q->why, sizeof q->why, "%s %s", path, why);
	char real[PATH_MAX];
	if (realpath(path, real))
		snprintf(q->beside, sizeof q->beside, "%s", real);
	return -1;
}

/* Embedded portable PDB: "MPDB", the uncompressed size, then raw deflate. */
static int try_embedded(struct search *q, const struct image *im, const char *where)
{
	const struct adac_pe_debug *d = q->d;
	char why[ADAC_ERROR_MSG_MAX] = "", origin[ADAC_MAX_PATH_BYTES + 16];
	uint8_t *z = malloc(d->embedded_size), *pdb = NULL;
	uint32_t size = 0;
	int zrc = Z_DATA_ERROR;
	if (!z || im->r.read(im->r.ctx, d->embedded_off, z, d->embedded_size, NULL) != 0 ||
	    adac_get_u32(z, 0) != MPDB_SIGNATURE) {
		snprintf(why, sizeof why, "the embedded PDB entry is unreadable or has no MPDB signature");
	} else if ((size = adac_get_u32(z, 4)) > ADAC_MAX_PDB_BYTES) {
		snprintf(why, sizeof why, "the embedded PDB of %u bytes exceeds ADAC_MAX_PDB_BYTES (%u)", size,
		         ADAC_MAX_PDB_BYTES);
	} else if ((pdb = malloc(size ? size : 1)) != NULL) {
		z_stream zs;
		memset(&zs, 0, sizeof zs);
		if (inflateInit2(&zs, -15) == Z_OK) {
			zs.next_in = z + 8;
			zs.avail_in = d->embedded_size - 8;
			zs.next_out = pdb;
			zs.avail_out = size;
			zrc = inflate(&zs, Z_FINISH);
			inflateEnd(&zs);
		}
		if (zrc != Z_STREAM_END || zs.total_out != size) {
			snprintf(why, sizeof why, "the embedded PDB does not inflate to its %u bytes (zlib %d)", size, zrc);
			free(pdb);
			pdb = NULL;
		}
	}
	free(z);
	if (!pdb) {
		adac_note_add(q->why, sizeof q->why, "%s", why);
		return -1;
	}
	snprintf(origin, sizeof origin, "embedded in %s", where);
	if (take_if_matching(q, pdb, size, origin, why, sizeof why) == 0)
		return 0;
	adac_note_add(q->why, sizeof q->why, "the embedded PDB %s", why);
	return -1;
}

static int try_symbols(struct search *q, struct adac_symbols *symbols, const char *pdb_name)
{
	char key[ADAC_MAX_PATH_BYTES];
	if (!q->d->has_codeview || !q->d->portable ||
	    adac_ssqp_key_portable_pdb(pdb_name, q->d->pdb_id, key, sizeof key, NULL) != 0)
		return -1;
	struct adac_symbol_want w = {.name = pdb_name, .key = key, .check = check_file, .ctx = q};
	struct adac_symbol_found found;
	struct adac_error serr = {0};
	if (adac_symbols_find(symbols, &w, &found, &serr) == 0) {
		/* check_file took the bytes; say which route they came by. */
		snprintf(q->out->origin, sizeof q->out->origin, "%s (%s)", found.path, found.route);
		return 0;
	}
	if (strcmp(serr.msg, "no symbol path") != 0)
		adac_note_add(q->why, sizeof q->why, "%s", serr.msg);
	return -1;
}

/* ---- the search ---- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int find(struct adac_runtime *rt, const char *assembly_path, struct adac_symbols *symbols,
                struct adac_pdb_bytes *out, struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	const char *base = base_name(assembly_path);
	struct image target = {.fd = -1}, file = {.fd = -1};
	const struct image *im = NULL;
	struct adac_pe_debug d;
	char why[ADAC_ERROR_MSG_MAX] = "";
	/* 1. The image the runtime loaded, as the target holds it. */
	const struct adac_loader_module *m = rt && rt->t ? adac_loader_module_by_path(rt, assembly_path) : NULL;
	struct adac_loader_image li;
	struct adac_error ierr = {0};
	if (m && adac_loader_image(rt, m->module, &li, &ierr) == 0) {
		target = (struct image){{read_target, &target, li.mapped, base}, rt->t, li.base, -1, 0};
		if (identity(&target, &d, &ierr) == 0)
			im = &target;
	}
	if (!im && ierr.code)
		adac_note_add(why, sizeof why, "its debug directory is not readable in the target (%s)", ierr.msg);
	/* 2. The file at its path (where this machine sees the target's files: a live process in a
	 * container names the container's). */
	char local_buf[ADAC_MAX_PATH_BYTES];
	const char *local = rt && rt->t ? adac_target_local_path(rt->t, assembly_path, local_buf, sizeof local_buf)
	                                : assembly_path;
	struct stat st;
	if (!im) {
		file.fd = open(local, O_RDONLY | O_CLOEXEC);
		struct adac_error ferr = {0};
		if (file.fd < 0) {
			adac_note_add(why, sizeof why, "cannot open %s: %s", local, strerror(errno));
		} else if (fstat(file.fd, &st) != 0) {
			adac_note_add(why, sizeof why, "cannot stat %s: %s", local, strerror(errno));
		} else {
			file.size = (uint64_t)st.st_size;
			file.r = (struct adac_pe_reader){read_file, &file, false, local};
			if (identity(&file, &d, &ferr) == 0)
				im = &file;
			else
				adac_note_add(why, sizeof why, "%s", ferr.msg);
		}
	}
	if (!im) {
		if (file.fd >= 0)
			close(file.fd);
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no PDB for %s: %s", base, why);
	}
	struct search q = {base, &d, out, "", ""};
	char stem_pdb[ADAC_PE_PDB_NAME_MAX];
	const char *dot = strrchr(base, '.');
	snprintf(stem_pdb, sizeof stem_pdb, "%.*s.pdb", dot ? (int)(dot - base) : (int)strlen(base), base);
	const char *pdb_name = d.has_codeview && d.pdb_name[0] ? d.pdb_name : stem_pdb;
	int rc = try_beside(&q, local, pdb_name);
	if (rc && d.has_embedded)
		rc = try_embedded(&q, im, im == &file ? local : base);
	if (rc && symbols)
		rc = try_symbols(&q, symbols, pdb_name);
	if (file.fd >= 0)
		close(file.fd);
	if (rc == 0)
		return 0;
	if (q.why[0])
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no PDB for %s: %s", base, q.why);
	return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no PDB for %s (none beside it, none embedded%s)", base,
	                 symbols && *adac_symbols_spec(symbols) ? ", none in the symbol path" : "");
}

int adac_pdb_find(struct adac_runtime *rt, const char *assembly_path, struct adac_pdb_bytes *out,
                  struct adac_error *err)
{
	return find(rt, assembly_path, rt && rt->t ? adac_target_symbols(rt->t) : NULL, out, err);
}

int adac_pdb_find_file(const char *assembly_path, struct adac_symbols *symbols, struct adac_pdb_bytes *out,
                       struct adac_error *err)
{
	return find(NULL, assembly_path, symbols, out, err);
}

void adac_pdb_bytes_free(struct adac_pdb_bytes *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
}
