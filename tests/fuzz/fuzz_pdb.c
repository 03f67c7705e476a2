/* fuzz_pdb.c - the portable PDB reader on arbitrary images: open, then walk every document, every
 * method's sequence points, local scopes and async stepping information, and look lines and names up. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "metadata/pdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_local(void *ctx, uint32_t start, uint32_t end, uint16_t index, uint16_t attributes, const char *name)
{
	(void)start;
	(void)end;
	(void)index;
	(void)attributes;
	(void)name;
	(*(unsigned *)ctx)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct adac_error err = {0};
	struct adac_pdb *p = adac_pdb_open_image(data, size, "fuzz", &err);
	if (!p) {
		if (err.code == 0)
			__builtin_trap();
		return 0;
	}
	for (uint32_t d = 1; d <= adac_pdb_document_count(p) && d < 1000; d++) {
		struct adac_error e = {0};
		(void)adac_pdb_document_name(p, d, &e);
	}
	for (uint32_t m = 1; m <= adac_pdb_method_count(p) && m < 1000; m++) {
		uint32_t token = 0x06000000u | m;
		struct adac_error e = {0};
		struct adac_seq_point *sp = NULL;
		size_t n = 0;
		if (adac_pdb_sequence_points(p, token, &sp, &n, &e) == 0) {
			for (size_t i = 0; i < n && i < 16; i++) {
				struct adac_source_line sl;
				struct adac_error e2 = {0};
				(void)adac_pdb_find_line(p, token, sp[i].il_offset, &sl, &e2);
			}
			free(sp);
		}
		unsigned locals = 0;
		struct adac_error e3 = {0};
		(void)adac_pdb_locals(p, token, count_local, &locals, &e3);
		struct adac_error e4 = {0};
		(void)adac_pdb_local_name_at(p, token, 0, 0, &e4);
		struct adac_error e5 = {0};
		struct adac_pdb_async_step *steps = NULL;
		size_t nsteps = 0;
		uint32_t handler;
		if (adac_pdb_async_steps(p, token, &handler, &steps, &nsteps, &e5) == 0)
			free(steps);
	}
	adac_pdb_close(p);
	return 0;
}
