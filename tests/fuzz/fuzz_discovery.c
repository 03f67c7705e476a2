/* fuzz_discovery.c - finding the runtime in a memory image (image.h): the modules, their ELF
 * headers, program headers, .dynamic, GNU/SysV hash tables and .dynsym read through target memory
 * (adac_runtime_open, target/elf_image.c), then the contract descriptor struct, its JSON, pointer
 * data and sub-descriptors (adac_desc_load). A runtime found must say where it came from and dump
 * its descriptor; a failure has a code and a message. Then the image's `runtime` commands run.
 * Seeds: images that tests/fuzz/make_image.c recorded (with --bytes) from real .NET 11 cores while
 * `runtime --verbose` ran. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "asyncdac.h"
#include "image.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "view/runtime_view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void count(void *ctx, const char *text, size_t len)
{
	(void)text;
	*(size_t *)ctx += len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image img;
	if (fuzz_image_open(data, size, &img))
		return 0;
	struct adac_error err = {0};
	struct adac_runtime *rt = adac_runtime_open(img.t, &err);
	if (rt) {
		const struct adac_desc_blob *main = adac_desc_blob(rt->desc, 0);
		if (!rt->module_path || !main || main->addr != rt->desc_addr || main->name[0] != '\0' ||
		    adac_desc_blob_count(rt->desc) > ADAC_MAX_DESCRIPTOR_BLOBS || adac_desc_version(rt->desc)[0] == '\0')
			__builtin_trap();
		for (size_t i = 1; i < adac_desc_blob_count(rt->desc); i++)
			if (adac_desc_blob(rt->desc, i)->name[0] == '\0')
				__builtin_trap(); /* a sub-descriptor is named by its key */
		size_t bytes = 0;
		struct adac_out out = {.write = count, .ctx = &bytes};
		adac_desc_dump(rt->desc, &out);
		if (bytes == 0)
			__builtin_trap();
		adac_runtime_close(rt);
	} else if (err.code == ADAC_E_OK || err.msg[0] == '\0') {
		__builtin_trap();
	}
	for (size_t i = 0; i < img.ncmds; i++)
		if (strcmp(img.cmds[i].argv[0], "runtime") == 0)
			fuzz_run_command(img.t, img.cmds[i].argc, img.cmds[i].argv);
	fuzz_image_close(&img);
	return 0;
}
