/* symbols.h - where the files a target lacks are looked for (assemblies, PDBs, native binaries and
 * their debug files): the symbol path -- directories and symbol servers, given by the front end
 * (--symbol-path, ASYNCDAC_SYMBOL_PATH, an LLDB setting) -- then debuginfod (DEBUGINFOD_URLS).
 * Files are matched by identity: the caller's check accepts or refuses each candidate. What was
 * found where is kept, for the front end to say. */
#ifndef ADAC_SYMBOLS_H
#define ADAC_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"

struct adac_symbols;

/* A symbol path: entries separated by ':' or ';' (a ':' in a URL's scheme or port separates
 * nothing), each one of
 *   DIR            files by name (DIR/nested.pdb), by symbol store key (DIR/nested.pdb/<id>/nested.pdb)
 *                  and ELF files by build-id (DIR/.build-id/xx/yyyy[.debug])
 *   srv*CACHE*URL  a symbol server (http://, https:// or file://DIR) whose downloads go to CACHE
 *   srv*URL        the same, downloading to $XDG_CACHE_HOME/asyncdac/symbols (~/.cache/...)
 * NULL or "" is an empty path. ADAC_E_BAD_ARG names a malformed entry. */
struct adac_symbols *adac_symbols_new(const char *spec, struct adac_error *err);
void adac_symbols_free(struct adac_symbols *s);
/* The path as given ("" when empty). */
const char *adac_symbols_spec(const struct adac_symbols *s);

/* What debuginfod is asked for an ELF build-id: the binary or its debug file. */
enum adac_symbol_kind { ADAC_SYMBOL_BINARY, ADAC_SYMBOL_DEBUG };

struct adac_symbol_want {
	const char *name;          /* the file's name: "nested.dll", "nested.pdb", "libcoreclr.so.dbg" */
	const char *key;           /* its symbol store key, NULL when its identity is unknown: then no
	                            * symbol server or debuginfod is asked */
	const uint8_t *build_id;   /* ELF files: for .build-id directories and debuginfod; else NULL */
	size_t build_id_len;
	enum adac_symbol_kind kind;
	/* Accepts a candidate (0) or refuses it (-1, saying why in why, after the path: "does not
	 * match it (...)"; left empty when the caller said it already). */
	int (*check)(void *ctx, const char *path, char *why, size_t why_size);
	void *ctx;
};

struct adac_symbol_found {
	char path[ADAC_MAX_PATH_BYTES];   /* the local file */
	char route[ADAC_MAX_PATH_BYTES];  /* "symbol path", "symbol server URL", "cache of symbol server
	                                   * URL", "debuginfod URLS" */
};

/* Looks in the symbol path's directories (by name, key, build-id), then its symbol servers (by key),
 * then debuginfod (by build-id), in order; the first candidate the check accepts wins and is
 * remembered for adac_symbols_each_found. ADAC_E_NOT_FOUND otherwise, the message listing the
 * refused candidates ("/s/nested.pdb does not match it (...)"), or saying where it looked. */
int adac_symbols_find(struct adac_symbols *s, const struct adac_symbol_want *w, struct adac_symbol_found *out,
                      struct adac_error *err);

/* Adds the files `from` found to those `into` found (those it has not): what a second target over
 * the same process found for it (a listing's helper threads, adac_target_reopen). Either may be
 * NULL. */
void adac_symbols_adopt_found(struct adac_symbols *into, const struct adac_symbols *from);

/* Every file found so far, in order (a file found twice is listed once). s may be NULL. */
typedef void (*adac_symbol_found_cb)(void *ctx, const char *name, const struct adac_symbol_found *f);
void adac_symbols_each_found(const struct adac_symbols *s, adac_symbol_found_cb cb, void *ctx);

#endif
