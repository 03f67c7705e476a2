/* lazy_libs.h - libcurl (symbol servers) and libdebuginfod, loaded the first time one is asked:
 * with their thirty libraries linked in, every start of the CLI (twice where it runs itself again
 * for huge pages) spent ~20 ms loading and relocating them, for commands that fetch nothing. */
#ifndef ADAC_LAZY_LIBS_H
#define ADAC_LAZY_LIBS_H

#include <curl/curl.h>
#include <elfutils/debuginfod.h>

#include "base/error.h"

/* The libcurl functions symbol_store.c calls, global initialization done. */
struct adac_curl {
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *h);
	const char *(*easy_strerror)(CURLcode rc);
};

/* The libdebuginfod functions symbols.c calls. */
struct adac_debuginfod {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *build_id, int len, char **path);
	int (*find_executable)(debuginfod_client *c, const unsigned char *build_id, int len, char **path);
	void (*end)(debuginfod_client *c);
};

/* Loaded once, on any thread; NULL with err set when the library or a function is missing. */
const struct adac_curl *adac_curl(struct adac_error *err);
const struct adac_debuginfod *adac_debuginfod(struct adac_error *err);

#endif
