/* fuzz_chain.c - continuation chains over a memory image (image.h): the chain walk (Next links,
 * cycle and cap checks), frame resolution (ResumeInfo.DiagnosticIP -> code map -> MethodDesc ->
 * method name, IL offset, await line), the awaited locals (debug info, the continuation's saved
 * data, value formatting), tasks and dispatcher records, through the commands the image carries:
 * `bt` (--address, --thread, --locals, --json), `frame` (variable, info, select) and `ps`; and on
 * every address a command names, the object readers `dumpobj --depth 1` and `pe`. Every
 * command must succeed or fail with a code and a one-line message, and JSON output must parse.
 * Seeds: images tests/fuzz/make_image.c recorded from createdump cores of the .NET 11 samples while
 * those commands ran (nested: bt and frame on its chain; shapes: ps --locals over 13 chain shapes;
 * running: bt of the thread running a resumed chain). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image img;
	if (fuzz_image_open(data, size, &img))
		return 0;
	for (size_t i = 0; i < img.ncmds; i++) {
		const char *name = img.cmds[i].argv[0];
		if (strcmp(name, "bt") == 0 || strcmp(name, "frame") == 0 || strcmp(name, "ps") == 0)
			fuzz_run_command(img.t, img.cmds[i].argc, img.cmds[i].argv);
		for (int a = 1; a + 1 < img.cmds[i].argc; a++) {
			if (strcmp(img.cmds[i].argv[a], "--address") != 0)
				continue;
			char *addr = img.cmds[i].argv[a + 1];
			char *dumpobj[] = {"dumpobj", addr, "--depth", "1", NULL}, *pe[] = {"pe", addr, NULL};
			fuzz_run_command(img.t, 4, dumpobj);
			fuzz_run_command(img.t, 2, pe);
		}
	}
	fuzz_image_close(&img);
	return 0;
}
