/* fuzz_replay_main.c - main() for the fuzz entry points when libFuzzer is not available (gcc
 * builds): runs LLVMFuzzerTestOneInput on every file named on the command line (directories: every
 * file in them) and on mutations of each (prefixes, byte flips), then on a fixed set of generated
 * inputs (empty, runs of one byte value, and pseudo-random buffers from a fixed seed), so each entry
 * point is exercised in every build. Inputs a libFuzzer campaign found and scripts/fuzz --keep kept
 * (files named by their SHA-1) are already mutations: each is run once, exactly, which keeps the
 * replay of a grown corpus within seconds. */
#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether the file's name is 40 hexadecimal digits, as scripts/fuzz --keep names what it kept. */
static bool found_by_campaign(const char *path)
{
	const char *name = strrchr(path, '/');
	name = name ? name + 1 : path;
	if (strlen(name) != 40)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return false;
	return true;
}

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	size_t got = buf ? fread(buf, 1, (size_t)(n > 0 ? n : 0), f) : 0;
	fclose(f);
	/* An exact-size heap copy, so ASan sees any read past the end; then prefixes (512 in steps)
	 * and single-byte changes (every byte of the first 4 KiB) of the file: a poor man's mutation
	 * pass. Files over 8 KiB (memory images, cores, descriptors) take longer per run: 16 prefixes,
	 * and changes at 64 places spread over the whole file (libFuzzer does the real work in the
	 * clang build). */
	uint8_t *exact = malloc(got ? got : 1);
	memcpy(exact, buf, got);
	LLVMFuzzerTestOneInput(exact, got);
	free(exact);
	if (found_by_campaign(path)) {
		free(buf);
		return 0;
	}
	bool big = got > (8u << 10);
	size_t step = got / (big ? 16 : 512) + 1, stride = big ? got / 64 + 1 : 1;
	for (size_t cut = 0; cut < got; cut += step) {
		uint8_t *pre = malloc(cut ? cut : 1);
		memcpy(pre, buf, cut);
		LLVMFuzzerTestOneInput(pre, cut);
		free(pre);
	}
	for (size_t i = 0; i < got && i < 4096 * stride; i += stride) {
		uint8_t save = buf[i];
		for (unsigned k = 0; k < 3; k++) {
			static const uint8_t xors[] = {0x01, 0x80, 0xff};
			buf[i] = save ^ xors[k];
			exact = malloc(got);
			memcpy(exact, buf, got);
			LLVMFuzzerTestOneInput(exact, got);
			free(exact);
		}
		buf[i] = save;
	}
	free(buf);
	return 0;
}

static int run_path(const char *path, int *count)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: no such file %s\n", path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		size_t n = strlen(path) + strlen(e->d_name) + 2;
		char *p = malloc(n);
		snprintf(p, n, "%s/%s", path, e->d_name);
		struct stat es;
		if (stat(p, &es) == 0 && S_ISREG(es.st_mode)) {
			(*count)++;
			rc |= run_file(p);
		}
		free(p);
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0, files = 0;
	for (int i = 1; i < argc; i++)
		rc |= run_path(argv[i], &files);
	LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
	uint8_t buf[512];
	for (int v = 0; v < 256; v += 15)
		for (size_t n = 1; n <= 64; n *= 2) {
			memset(buf, v, n);
			uint8_t *exact = malloc(n);
			memcpy(exact, buf, n);
			LLVMFuzzerTestOneInput(exact, n);
			free(exact);
		}
	uint32_t x = 0x12345678;
	for (int i = 0; i < 2000; i++) {
		size_t n = (size_t)(i % (int)sizeof buf);
		for (size_t j = 0; j < n; j++) {
			x = x * 1103515245u + 12345u;
			buf[j] = (uint8_t)(x >> 16);
		}
		uint8_t *exact = malloc(n ? n : 1);
		memcpy(exact, buf, n);
		LLVMFuzzerTestOneInput(exact, n);
		free(exact);
	}
	printf("replay: %d corpus file(s) and 2000+ generated inputs, %s\n", files, rc ? "with errors" : "ok");
	return rc ? 1 : 0;
}
