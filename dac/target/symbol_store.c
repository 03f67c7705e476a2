/* symbol_store.c - SSQP keys, and files by key from a symbol server (libcurl, into a cache
 * directory) or a file:// directory. Keys come partly from the target (module names): they are
 * checked to be plain file names before they become paths or URLs. */
#include "target/symbol_store.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/limits.h"
#include "target/lazy_libs.h"

#define SSQP_BUILD_ID_BYTES 20u

/* ---- keys ---- */

static int plain_name(const char *name, struct adac_error *err)
{
	size_t n = strlen(name);
	bool ok = n > 0 && n < 256 && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
	for (size_t i = 0; ok && i < n; i++)
		ok = name[i] != '/' && name[i] != '\\' && !iscntrl((unsigned char)name[i]);
	if (!ok)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "'%s' is not a file name a symbol store can be asked for", name);
	return 0;
}

static int key_printf(char *key, size_t size, struct adac_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int key_printf(char *key, size_t size, struct adac_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(key, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		return adac_fail(err, ADAC_E_LIMIT, 0, "symbol store key longer than %zu bytes", size);
	return 0;
}

/* "<name lower-cased>/<id>/<name lower-cased>" */
static int name_key(const char *name, const char *id, char *key, size_t size, struct adac_error *err)
{
	if (plain_name(name, err))
		return -1;
	char lower[256];
	size_t n = strlen(name);
	for (size_t i = 0; i <= n; i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	return key_printf(key, size, err, "%s/%s/%s", lower, id, lower);
}

int adac_ssqp_key_pe(const char *name, uint32_t timestamp, uint32_t size_of_image, char *key, size_t size,
                     struct adac_error *err)
{
	char id[32];
	snprintf(id, sizeof id, "%08X%x", timestamp, size_of_image);
	return name_key(name, id, key, size, err);
}

int adac_ssqp_key_portable_pdb(const char *name, const uint8_t pdb_id[20], char *key, size_t size,
                               struct adac_error *err)
{
	/* The GUID as .NET prints it ("N"): Data1, Data2, Data3 as little-endian integers, then bytes. */
	const uint8_t *g = pdb_id;
	char id[48];
	snprintf(id, sizeof id, "%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02xFFFFFFFF", g[3], g[2],
	         g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
	return name_key(name, id, key, size, err);
}

static int build_id_hex(const uint8_t *build_id, size_t len, char *hex, struct adac_error *err)
{
	if (len == 0 || len > SSQP_BUILD_ID_BYTES)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "a %zu-byte build-id has no symbol store key", len);
	for (size_t i = 0; i < SSQP_BUILD_ID_BYTES; i++)
		sprintf(hex + 2 * i, "%02x", i < len ? build_id[i] : 0);
	return 0;
}

int adac_ssqp_key_elf(const char *name, const uint8_t *build_id, size_t len, char *key, size_t size,
                      struct adac_error *err)
{
	char id[16 + 2 * SSQP_BUILD_ID_BYTES + 1] = "elf-buildid-";
	if (build_id_hex(build_id, len, id + strlen(id), err))
		return -1;
	return name_key(name, id, key, size, err);
}

int adac_ssqp_key_elf_debug(const uint8_t *build_id, size_t len, char *key, size_t size, struct adac_error *err)
{
	char id[20 + 2 * SSQP_BUILD_ID_BYTES + 1] = "elf-buildid-sym-";
	if (build_id_hex(build_id, len, id + strlen(id), err))
		return -1;
	return key_printf(key, size, err, "_.debug/%s/_.debug", id);
}

/* ---- stores ---- */

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int join(char *out, size_t size, const char *dir, const char *key, struct adac_error *err)
{
	size_t dl = strlen(dir);
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	int n = snprintf(out, size, "%.*s/%s", (int)dl, dir, key);
	if (n < 0 || (size_t)n >= size)
		return adac_fail(err, ADAC_E_LIMIT, 0, "path %s/%s is longer than %zu bytes", dir, key, size);
	return 0;
}

static int get_from_dir(const char *url, const char *key, char *path, size_t size, struct adac_error *err)
{
	const char *dir = url + strlen("file://");
	char lower[ADAC_MAX_PATH_BYTES];
	size_t n = strlen(key);
	if (n >= sizeof lower)
		return adac_fail(err, ADAC_E_LIMIT, 0, "symbol store key longer than %zu bytes", sizeof lower);
	for (size_t i = 0; i <= n; i++)
		lower[i] = (char)tolower((unsigned char)key[i]);
	if (join(path, size, dir, key, err))
		return -1;
	if (is_file(path))
		return 0;
	if (join(path, size, dir, lower, err))
		return -1;
	if (is_file(path))
		return 0;
	return adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s has no %s", url, key);
}

/* mkdir -p of the directories of path (not its last component). */
static int make_parents(const char *path, struct adac_error *err)
{
	char dir[ADAC_MAX_PATH_BYTES];
	snprintf(dir, sizeof dir, "%s", path);
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0777) != 0 && errno != EEXIST)
			return adac_fail(err, ADAC_E_IO, 0, "cannot create the symbol cache directory %s: %s", dir,
			                 strerror(errno));
		*p = '/';
	}
	return 0;
}

struct download {
	FILE *f;
	uint64_t bytes;
	bool over_cap;
};

static size_t write_body(char *data, size_t size, size_t n, void *ctx)
{
	struct download *d = ctx;
	size_t len = size * n;
	if (len > ADAC_MAX_SYMBOL_FILE_BYTES - d->bytes) {
		d->over_cap = true;
		return 0; /* stops the transfer: CURLE_WRITE_ERROR */
	}
	d->bytes += len;
	return fwrite(data, 1, len, d->f);
}

/* URL of key: the store's URL, '/', the key with each byte outside RFC 3986's unreserved set (and
 * the '/' between its parts) percent-encoded. */
static int key_url(const char *base, const char *key, char *url, size_t size, struct adac_error *err)
{
	size_t bl = strlen(base);
	while (bl > 0 && base[bl - 1] == '/')
		bl--;
	size_t n = 0;
	if (bl + 1 >= size)
		return adac_fail(err, ADAC_E_LIMIT, 0, "symbol server URL longer than %zu bytes", size);
	memcpy(url, base, bl);
	n = bl;
	url[n++] = '/';
	for (const char *k = key; *k; k++) {
		unsigned char c = (unsigned char)*k;
		if (n + 4 >= size)
			return adac_fail(err, ADAC_E_LIMIT, 0, "symbol server URL longer than %zu bytes", size);
		if (isalnum(c) || strchr("-._~/", c))
			url[n++] = (char)c;
		else
			n += (size_t)sprintf(url + n, "%%%02X", c);
	}
	url[n] = '\0';
	return 0;
}

static int download(const char *base, const char *key, const char *path, struct adac_error *err)
{
	char url[ADAC_MAX_PATH_BYTES], tmp[ADAC_MAX_PATH_BYTES];
	if (key_url(base, key, url, sizeof url, err))
		return -1;
	const struct adac_curl *curl = adac_curl(err);
	if (!curl)
		return -1;
	/* Per thread: a listing's helper threads may fetch the same file at once (each renames its own). */
	if (snprintf(tmp, sizeof tmp, "%s.partial.%ld.%ld", path, (long)getpid(), (long)gettid()) >= (int)sizeof tmp)
		return adac_fail(err, ADAC_E_LIMIT, 0, "path %s is longer than %zu bytes", path, sizeof tmp);
	if (make_parents(path, err))
		return -1;
	struct download d = {fopen(tmp, "wb"), 0, false};
	if (!d.f)
		return adac_fail(err, ADAC_E_IO, 0, "cannot write %s: %s", tmp, strerror(errno));
	CURL *h = curl->easy_init();
	if (!h) {
		fclose(d.f);
		unlink(tmp);
		return adac_fail(err, ADAC_E_NOMEM, 0, "cannot start an HTTP request (libcurl)");
	}
	char curl_err[CURL_ERROR_SIZE] = "";
	curl->easy_setopt(h, CURLOPT_URL, url);
	curl->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl->easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl->easy_setopt(h, CURLOPT_MAXREDIRS, (long)ADAC_MAX_HTTP_REDIRECTS);
	curl->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	/* Never hang on a dead server: give up on connecting after 10 s, on a stalled transfer after 30 s. */
	curl->easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl->easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl->easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 30L);
	curl->easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)ADAC_MAX_SYMBOL_FILE_BYTES);
	curl->easy_setopt(h, CURLOPT_USERAGENT, "asyncdac");
	curl->easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
	curl->easy_setopt(h, CURLOPT_WRITEFUNCTION, write_body);
	curl->easy_setopt(h, CURLOPT_WRITEDATA, &d);
	CURLcode rc = curl->easy_perform(h);
	long status = 0;
	curl->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl->easy_cleanup(h);
	bool written = fclose(d.f) == 0;
	int result = -1;
	if (rc == CURLE_FILESIZE_EXCEEDED || d.over_cap)
		adac_fail(err, ADAC_E_LIMIT, 0, "%s: more than ADAC_MAX_SYMBOL_FILE_BYTES (%llu) bytes", url,
		          (unsigned long long)ADAC_MAX_SYMBOL_FILE_BYTES);
	else if (rc != CURLE_OK)
		adac_fail(err, ADAC_E_IO, 0, "%s: %s", url, curl_err[0] ? curl_err : curl->easy_strerror(rc));
	else if (status == 404 || status == 410)
		adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s has no %s", base, key);
	else if (status != 200)
		adac_fail(err, ADAC_E_IO, 0, "%s: HTTP status %ld", url, status);
	else if (!written || rename(tmp, path) != 0)
		adac_fail(err, ADAC_E_IO, 0, "cannot write %s: %s", path, strerror(errno));
	else
		result = 0;
	if (result)
		unlink(tmp);
	return result;
}

int adac_store_get(const struct adac_store *st, const char *key, char *path, size_t size, bool *cached,
                   struct adac_error *err)
{
	*cached = false;
	/* A key from adac_ssqp_key_*: three parts, each a plain file name. */
	const char *a = strchr(key, '/'), *b = a ? strchr(a + 1, '/') : NULL;
	if (!a || !b || strchr(b + 1, '/') || a == key || b == a + 1 || !b[1] || strstr(key, "..") ||
	    strchr(key, '\\'))
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "'%s' is not a symbol store key", key);
	if (strncmp(st->url, "file://", 7) == 0)
		return get_from_dir(st->url, key, path, size, err);
	if (strncmp(st->url, "http://", 7) != 0 && strncmp(st->url, "https://", 8) != 0)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "%s: a symbol server is http://, https:// or file://", st->url);
	if (!st->cache)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "%s: no cache directory to download into", st->url);
	if (join(path, size, st->cache, key, err))
		return -1;
	if (is_file(path)) {
		*cached = true;
		return 0;
	}
	return download(st->url, key, path, err);
}
