/* lazy_libs.c - libcurl and libdebuginfod through dlopen, once each. */
#include "target/lazy_libs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#define CURL_SONAME "libcurl.so.4"
#ifndef DEBUGINFOD_SONAME /* (elfutils' header names it) */
#define DEBUGINFOD_SONAME "libdebuginfod.so.1"
#endif

/* A library's functions, by name, into fns (n of them); the handle stays open for the process. */
static bool load(const char *soname, const char *const *names, void (**fns)(void), size_t n,
                 struct adac_error *fail)
{
	void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror(); /* ("<soname>: cannot open shared object file: ...") */
		adac_fail(fail, ADAC_E_UNSUPPORTED, 0, "%s", why ? why : soname);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		void *sym = dlsym(lib, names[i]);
		if (!sym) {
			adac_fail(fail, ADAC_E_UNSUPPORTED, 0, "%s has no %s", soname, names[i]);
			dlclose(lib);
			return false;
		}
		memcpy(&fns[i], &sym, sizeof sym); /* (POSIX: a function's address, as a void *) */
	}
	return true;
}

/* Whether a library's loading (run once) succeeded; else err says why. */
static bool loaded(pthread_once_t *once, void (*load_it)(void), const bool *ok, const struct adac_error *fail,
                   struct adac_error *err)
{
	pthread_once(once, load_it);
	if (!*ok)
		adac_error_copy(err, fail);
	return *ok;
}

static struct adac_curl curl;
static struct adac_error curl_fail;
static bool curl_ok;

static void load_curl(void)
{
	static const char *const names[] = {"curl_global_init",   "curl_easy_init",    "curl_easy_setopt",
	                                    "curl_easy_perform",  "curl_easy_getinfo", "curl_easy_cleanup",
	                                    "curl_easy_strerror"};
	void (*fns[sizeof names / sizeof *names])(void);
	if (!load(CURL_SONAME, names, fns, sizeof names / sizeof *names, &curl_fail))
		return;
	CURLcode (*global_init)(long) = (CURLcode (*)(long))fns[0];
	curl = (struct adac_curl){
		.easy_init = (CURL * (*)(void)) fns[1],
		.easy_setopt = (CURLcode(*)(CURL *, CURLoption, ...))fns[2],
		.easy_perform = (CURLcode(*)(CURL *))fns[3],
		.easy_getinfo = (CURLcode(*)(CURL *, CURLINFO, ...))fns[4],
		.easy_cleanup = (void (*)(CURL *))fns[5],
		.easy_strerror = (const char *(*)(CURLcode))fns[6],
	};
	CURLcode rc = global_init(CURL_GLOBAL_DEFAULT);
	if (rc != CURLE_OK) {
		adac_fail(&curl_fail, ADAC_E_UNSUPPORTED, 0, "libcurl did not start: %s", curl.easy_strerror(rc));
		return;
	}
	curl_ok = true;
}

const struct adac_curl *adac_curl(struct adac_error *err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	return loaded(&once, load_curl, &curl_ok, &curl_fail, err) ? &curl : NULL;
}

static struct adac_debuginfod debuginfod;
static struct adac_error debuginfod_fail;
static bool debuginfod_ok;

static void load_debuginfod(void)
{
	static const char *const names[] = {"debuginfod_begin", "debuginfod_find_debuginfo",
	                                    "debuginfod_find_executable", "debuginfod_end"};
	void (*fns[sizeof names / sizeof *names])(void);
	if (!load(DEBUGINFOD_SONAME, names, fns, sizeof names / sizeof *names, &debuginfod_fail))
		return;
	debuginfod = (struct adac_debuginfod){
		.begin = (debuginfod_client * (*)(void)) fns[0],
		.find_debuginfo = (int (*)(debuginfod_client *, const unsigned char *, int, char **))fns[1],
		.find_executable = (int (*)(debuginfod_client *, const unsigned char *, int, char **))fns[2],
		.end = (void (*)(debuginfod_client *))fns[3],
	};
	debuginfod_ok = true;
}

const struct adac_debuginfod *adac_debuginfod(struct adac_error *err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	return loaded(&once, load_debuginfod, &debuginfod_ok, &debuginfod_fail, err) ? &debuginfod : NULL;
}
