/* fuzz_chain.c - continuation chains over a memory image (image.h): the chain walk (Next links,
 * cycle and cap checks), frame resolution (ResumeInfo.DiagnosticIP -> code map -> MethodDesc ->
 * method name, IL offset, await line), the awaited locals (debug info, the continuation's saved
 * data, value formatting), tasks and dispatcher records, through the commands the image carries:
 * `bt` (--address, --thread, --locals, --json), `frame` (variable, info, select), `ps` and `report` (with
 * it `report --json`, `locks`, `locks --json`, `threadpool --items`, `threadpool --json`,
 * `clrthreads`, `pstacks --all` and `pstacks --json`, which read what it reads: an image's threads have
 * registers but no unwinder, so pstacks gets as far as the thread list and what threads wait on); and on
 * every address a command names, the object readers `dumpobj --depth 1` and `pe`; with `ps`, the
 * chains as a debugger's threads (adac_debugger_chains, all and at most 2: the 2 are among all, and
 * with those counted as left out they are all). Every
 * command must succeed or fail with a code and a one-line message, and JSON output must parse.
 * Seeds: images tests/fuzz/make_image.c recorded from createdump cores of the .NET 11 samples while
 * those commands ran (nested: bt and frame on its chain; shapes: ps --locals over 13 chain shapes;
 * running: bt of the thread running a resumed chain; deadlock: ps --json and report over an await
 * cycle and threads waiting for each other through a task and a lock). */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "asyncdac.h"
#include "image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The chains as a debugger's threads, at most max of them: -1 when it failed (with a message), else
 * the threads with frames in *shown (their tids in tids, up to ntids), those left out in *more. Traps
 * on a reply that is no JSON of the documented shape. */
static int chain_threads(struct adac_runtime *rt, size_t max, size_t *shown, size_t *more, uint64_t *tids,
                         size_t ntids)
{
	char *text = NULL;
	struct adac_error err = {0};
	if (adac_debugger_chains(rt, max, NULL, &text, &err)) {
		if (text || err.code == ADAC_E_OK || err.msg[0] == '\0')
			__builtin_trap();
		return -1;
	}
	/* (Numbers as reals: a pc is a 64-bit address, which a corrupt one may take past jansson's
	 * integers; tids and indexes stay below 2^53.) */
	json_t *j = json_loads(text, JSON_DECODE_INT_AS_REAL, NULL);
	json_t *table = json_object_get(j, "table"), *threads = json_object_get(j, "threads");
	if (!json_is_array(table) || !json_is_array(threads) || !json_is_number(json_object_get(j, "more")))
		__builtin_trap();
	*more = (size_t)json_number_value(json_object_get(j, "more"));
	*shown = 0;
	size_t i;
	json_t *th;
	json_array_foreach(threads, i, th) {
		uint64_t tid = (uint64_t)json_number_value(json_object_get(th, "tid"));
		json_t *frames = json_object_get(th, "frames");
		if (!json_is_string(json_object_get(th, "name")) || !json_is_array(frames) || json_array_size(frames) == 0)
			__builtin_trap();
		size_t k;
		json_t *f;
		json_array_foreach(frames, k, f)
			if (json_number_value(json_array_get(f, 0)) >= (double)json_array_size(table))
				__builtin_trap();
		if (tid == ADAC_DEBUGGER_MORE_TID) {  /* the last thread, there only when some are left out */
			if (i + 1 != json_array_size(threads) || !*more)
				__builtin_trap();
			continue;
		}
		if (*shown < ntids)
			tids[*shown] = tid;
		++*shown;
	}
	if ((*more && max && *shown != max) || (max && *shown > max) || (!max && *more))
		__builtin_trap();
	json_decref(j);
	free(text);
	return 0;
}

/* The chains as threads, every one and then at most 2: the 2 are among all, and with those left out
 * they are all of them. */
static void check_chain_threads(struct fuzz_image *img)
{
	struct adac_error err = {0};
	struct adac_runtime *rt = adac_runtime_open(img->t, &err);
	uint64_t all[64], two[2];
	size_t nall, more_all, ntwo, more_two;
	if (rt && chain_threads(rt, 0, &nall, &more_all, all, 64) == 0 &&
	    chain_threads(rt, 2, &ntwo, &more_two, two, 2) == 0) {
		if (ntwo + more_two != nall)
			__builtin_trap();
		for (size_t i = 0; i < ntwo && nall <= 64; i++) {
			bool found = false;
			for (size_t k = 0; k < nall && !found; k++)
				found = all[k] == two[i];
			if (!found)
				__builtin_trap();
		}
	}
	adac_runtime_close(rt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image img;
	if (fuzz_image_open(data, size, &img))
		return 0;
	bool threads_checked = false;
	for (size_t i = 0; i < img.ncmds; i++) {
		const char *name = img.cmds[i].argv[0];
		if (strcmp(name, "bt") == 0 || strcmp(name, "frame") == 0 || strcmp(name, "ps") == 0 || strcmp(name, "report") == 0)
			fuzz_run_command(img.t, img.cmds[i].argc, img.cmds[i].argv);
		if (strcmp(name, "report") == 0) { /* (what report reads, the others read too) */
			char *report_json[] = {"report", "--json", NULL}, *locks[] = {"locks", NULL};
			char *locks_json[] = {"locks", "--json", NULL}, *pool[] = {"threadpool", "--items", NULL};
			char *pool_json[] = {"threadpool", "--json", NULL}, *threads[] = {"clrthreads", NULL};
			char *pstacks[] = {"pstacks", "--all", NULL}, *pstacks_json[] = {"pstacks", "--json", NULL};
			fuzz_run_command(img.t, 2, report_json);
			fuzz_run_command(img.t, 1, locks);
			fuzz_run_command(img.t, 2, locks_json);
			fuzz_run_command(img.t, 2, pool);
			fuzz_run_command(img.t, 2, pool_json);
			fuzz_run_command(img.t, 1, threads);
			fuzz_run_command(img.t, 2, pstacks);
			fuzz_run_command(img.t, 2, pstacks_json);
		}
		if (strcmp(name, "ps") == 0 && !threads_checked) {  /* (once: a scan is the image's costliest run) */
			check_chain_threads(&img);
			threads_checked = true;
		}
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
