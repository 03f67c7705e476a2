/* symbols.c - the symbol path (parsing it, looking through it) and debuginfod as the last route. */
#include "target/symbols.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/lazy_libs.h"
#include "target/symbol_store.h"

struct entry {
	char *dir;     /* a directory (DIR), or the cache of a symbol server */
	char *url;     /* a symbol server's URL; NULL for a directory */
};

struct found_file {
	char *name;
	struct adac_symbol_found f;
};

struct adac_symbols {
	char *spec;
	struct entry e[ADAC_MAX_SYMBOL_PATH_ENTRIES];
	size_t n;
	struct found_file *found;
	size_t nfound;
};

/* ---- parsing ---- */

/* Length of the entry at p: up to the next ';', or the next ':' that is not part of a URL (the
 * "://" after a scheme, or a port in the host part). */
static size_t entry_length(const char *p)
{
	bool host = false;
	size_t i = 0;
	for (; p[i] && p[i] != ';'; i++) {
		if (p[i] == ':' && strncmp(p + i + 1, "//", 2) == 0) {
			host = true;
			i += 2;
		} else if (p[i] == ':' && !host) {
			break;
		} else if (p[i] == '/' || p[i] == '*') {
			host = false;
		}
	}
	return i;
}

static bool is_url(const char *s)
{
	return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0 || strncmp(s, "file://", 7) == 0;
}

static char *default_cache(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char buf[ADAC_MAX_PATH_BYTES];
	if (xdg && *xdg)
		snprintf(buf, sizeof buf, "%s/asyncdac/symbols", xdg);
	else if (home && *home)
		snprintf(buf, sizeof buf, "%s/.cache/asyncdac/symbols", home);
	else
		return NULL;
	return strdup(buf);
}

/* One entry (NUL-terminated copy) into s->e[s->n]. */
static int parse_entry(struct adac_symbols *s, char *text, struct adac_error *err)
{
	if (s->n == ADAC_MAX_SYMBOL_PATH_ENTRIES)
		return adac_fail(err, ADAC_E_LIMIT, 0, "symbol path: more than ADAC_MAX_SYMBOL_PATH_ENTRIES (%u) entries",
		                 ADAC_MAX_SYMBOL_PATH_ENTRIES);
	struct entry *e = &s->e[s->n];
	char *url = NULL, *cache = NULL;
	if (strncasecmp(text, "srv*", 4) == 0) {
		char *rest = text + 4, *star = strchr(rest, '*');
		bool ok = star ? star > rest && star[1] && !strchr(star + 1, '*') : *rest != '\0';
		if (!ok)
			return adac_fail(err, ADAC_E_BAD_ARG, 0, "symbol path: '%s' is not srv*CACHE*URL or srv*URL", text);
		if (star) {
			*star = '\0';
			cache = rest;
			url = star + 1;
		} else {
			url = rest;
		}
	} else if (is_url(text)) {
		url = text;
	}
	if (url && !is_url(url))
		return adac_fail(err, ADAC_E_BAD_ARG, 0,
		                 "symbol path: '%s': a symbol server is an http://, https:// or file:// URL", url);
	if (url && strncmp(url, "file://", 7) == 0 && url[7] != '/')
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "symbol path: '%s': a file:// URL needs an absolute path", url);
	if (url) {
		bool remote = strncmp(url, "file://", 7) != 0;
		e->url = strdup(url);
		e->dir = cache ? strdup(cache) : remote ? default_cache() : NULL;
		if (remote && !cache && !e->dir)
			return adac_fail(err, ADAC_E_BAD_ARG, 0, "symbol path: '%s': no cache directory (no HOME): use "
			                 "srv*CACHE*URL", text);
		if (!e->url || (remote && !e->dir))
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the symbol path");
	} else if (!(e->dir = strdup(text))) {
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the symbol path");
	}
	s->n++;
	return 0;
}

struct adac_symbols *adac_symbols_new(const char *spec, struct adac_error *err)
{
	struct adac_symbols *s = calloc(1, sizeof *s);
	if (!s || !(s->spec = strdup(spec ? spec : ""))) {
		free(s);
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the symbol path");
		return NULL;
	}
	for (const char *p = s->spec; *p;) {
		size_t len = entry_length(p);
		if (len) {
			char *text = strndup(p, len);
			int rc = text ? parse_entry(s, text, err)
			              : adac_fail(err, ADAC_E_NOMEM, 0, "out of memory for the symbol path");
			free(text);
			if (rc) {
				adac_symbols_free(s);
				return NULL;
			}
		}
		p += len;
		if (*p)
			p++;
	}
	return s;
}

void adac_symbols_free(struct adac_symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->e[i].dir);
		free(s->e[i].url);
	}
	for (size_t i = 0; i < s->nfound; i++)
		free(s->found[i].name);
	free(s->found);
	free(s->spec);
	free(s);
}

const char *adac_symbols_spec(const struct adac_symbols *s) { return s->spec; }

/* ---- looking ---- */

struct search {
	const struct adac_symbol_want *w;
	struct adac_symbol_found *out;
	char refused[ADAC_ERROR_MSG_MAX];
	char unasked[ADAC_ERROR_MSG_MAX]; /* why debuginfod was not asked although DEBUGINFOD_URLS is set */
	unsigned tried;
};

/* 1 when path exists and the check accepts it, 0 when it does not exist or is refused. */
static int try_candidate(struct search *q, const char *path, const char *route)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	q->tried++;
	char why[ADAC_ERROR_MSG_MAX] = "";
	if (q->w->check && q->w->check(q->w->ctx, path, why, sizeof why) != 0) {
		if (why[0])
			adac_note_add(q->refused, sizeof q->refused, "%s %s", path, why);
		return 0;
	}
	snprintf(q->out->path, sizeof q->out->path, "%s", path);
	snprintf(q->out->route, sizeof q->out->route, "%s", route);
	return 1;
}

static void build_id_path(const uint8_t *id, size_t len, bool debug, char *out, size_t size)
{
	size_t n = (size_t)snprintf(out, size, ".build-id/%02x/", id[0]);
	for (size_t i = 1; i < len && n + 3 < size; i++)
		n += (size_t)snprintf(out + n, size - n, "%02x", id[i]);
	if (debug && n + 7 < size)
		snprintf(out + n, size - n, ".debug");
}

static int search_dir(struct search *q, const char *dir)
{
	const struct adac_symbol_want *w = q->w;
	char path[ADAC_MAX_PATH_BYTES], rel[ADAC_MAX_PATH_BYTES];
	if (snprintf(path, sizeof path, "%s/%s", dir, w->name) < (int)sizeof path && try_candidate(q, path, "symbol path"))
		return 1;
	if (w->key && snprintf(path, sizeof path, "%s/%s", dir, w->key) < (int)sizeof path &&
	    try_candidate(q, path, "symbol path"))
		return 1;
	if (w->build_id && w->build_id_len) {
		build_id_path(w->build_id, w->build_id_len, w->kind == ADAC_SYMBOL_DEBUG, rel, sizeof rel);
		if (snprintf(path, sizeof path, "%s/%s", dir, rel) < (int)sizeof path && try_candidate(q, path, "symbol path"))
			return 1;
	}
	return 0;
}

/* A symbol server: errors other than "not there" are kept as refusals (the server is down, say). */
static int search_store(struct search *q, const struct entry *e)
{
	struct adac_store st = {e->url, e->dir};
	struct adac_error gerr = {0};
	char path[ADAC_MAX_PATH_BYTES], route[ADAC_MAX_PATH_BYTES];
	bool cached;
	if (adac_store_get(&st, q->w->key, path, sizeof path, &cached, &gerr) != 0) {
		if (gerr.code != ADAC_E_NOT_FOUND)
			adac_note_add(q->refused, sizeof q->refused, "%s", gerr.msg);
		return 0;
	}
	snprintf(route, sizeof route, "%ssymbol server %s", cached ? "cache of " : "", e->url);
	return try_candidate(q, path, route);
}

static int search_debuginfod(struct search *q)
{
	const struct adac_symbol_want *w = q->w;
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !*urls || !w->build_id || !w->build_id_len)
		return 0;
	struct adac_error load = {0};
	const struct adac_debuginfod *lib = adac_debuginfod(&load);
	if (!lib) { /* DEBUGINFOD_URLS asks for it: say why it was not asked */
		adac_note_add(q->unasked, sizeof q->unasked, "debuginfod not asked: %s", load.msg);
		return 0;
	}
	debuginfod_client *client = lib->begin();
	if (!client)
		return 0;
	char *path = NULL;
	int fd = w->kind == ADAC_SYMBOL_DEBUG ? lib->find_debuginfo(client, w->build_id, (int)w->build_id_len, &path)
	                                      : lib->find_executable(client, w->build_id, (int)w->build_id_len, &path);
	lib->end(client);
	int ok = 0;
	if (fd >= 0) {
		close(fd);
		char route[ADAC_MAX_PATH_BYTES];
		snprintf(route, sizeof route, "debuginfod %s", urls);
		ok = path && try_candidate(q, path, route);
	}
	free(path);
	return ok;
}

static void remember(struct adac_symbols *s, const char *name, const struct adac_symbol_found *f)
{
	for (size_t i = 0; i < s->nfound; i++)
		if (strcmp(s->found[i].f.path, f->path) == 0)
			return;
	struct found_file *grown = realloc(s->found, (s->nfound + 1) * sizeof *grown);
	if (!grown)
		return;
	s->found = grown;
	if ((s->found[s->nfound].name = strdup(name)) != NULL)
		s->found[s->nfound++].f = *f;
}

int adac_symbols_find(struct adac_symbols *s, const struct adac_symbol_want *w, struct adac_symbol_found *out,
                      struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	struct search q = {.w = w, .out = out};
	int hit = 0;
	for (size_t i = 0; s && !hit && i < s->n; i++)
		if (!s->e[i].url)
			hit = search_dir(&q, s->e[i].dir);
	for (size_t i = 0; s && !hit && w->key && i < s->n; i++)
		if (s->e[i].url)
			hit = search_store(&q, &s->e[i]);
	if (!hit)
		hit = search_debuginfod(&q);
	if (hit) {
		if (s)
			remember(s, w->name, out);
		return 0;
	}
	const char *sep = q.unasked[0] ? "; " : "";
	if (q.refused[0])
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s%s%s", q.refused, sep, q.unasked);
	if (!s || s->n == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no symbol path%s%s", sep, q.unasked);
	return adac_fail(err, ADAC_E_NOT_FOUND, 0, "not in the symbol path%s%s%s",
	                 w->key ? "" : " (its identity is unknown: symbol servers not asked)", sep, q.unasked);
}

void adac_symbols_adopt_found(struct adac_symbols *into, const struct adac_symbols *from)
{
	for (size_t i = 0; into && from && i < from->nfound; i++)
		remember(into, from->found[i].name, &from->found[i].f);
}

void adac_symbols_each_found(const struct adac_symbols *s, adac_symbol_found_cb cb, void *ctx)
{
	for (size_t i = 0; s && i < s->nfound; i++)
		cb(ctx, s->found[i].name, &s->found[i].f);
}
