/* symbol_store.h - a symbol store as Microsoft's symbol server and dotnet-symbol lay it out (SSQP:
 * one file per key "<name>/<id>/<name>"): the key of each kind of file, and getting a file by key
 * from an http(s):// server, through a local cache directory laid out the same way, or from a
 * file:// directory. */
#ifndef ADAC_SYMBOL_STORE_H
#define ADAC_SYMBOL_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Keys (SSQP key conventions). The name is the file name, lower-cased; ADAC_E_BAD_ARG when it is
 * not a plain file name (a '/', "..", control characters), ADAC_E_LIMIT when the key does not fit.
 *   PE file:       name/<TimeDateStamp %08X><SizeOfImage %x>/name
 *   portable PDB:  name/<GUID as 32 hex digits>FFFFFFFF/name
 *   ELF file:      name/elf-buildid-<build-id>/name
 *   ELF debug:     _.debug/elf-buildid-sym-<build-id>/_.debug  (libcoreclr.so.dbg, x.debug)
 * Build-ids shorter than 20 bytes are padded with zeros to 20. */
int adac_ssqp_key_pe(const char *name, uint32_t timestamp, uint32_t size_of_image, char *key, size_t size,
                     struct adac_error *err);
int adac_ssqp_key_portable_pdb(const char *name, const uint8_t pdb_id[20], char *key, size_t size,
                               struct adac_error *err);
int adac_ssqp_key_elf(const char *name, const uint8_t *build_id, size_t len, char *key, size_t size,
                      struct adac_error *err);
int adac_ssqp_key_elf_debug(const uint8_t *build_id, size_t len, char *key, size_t size, struct adac_error *err);

struct adac_store {
	const char *url;    /* "http://host[:port]/path", "https://...", or "file:///dir" */
	const char *cache;  /* directory downloads go to (http/https); NULL for file:// stores */
};

/* The local path of the file with that key: from the cache when it is there (*cached true), else
 * downloaded into it, or, for a file:// store, in its directory (the key as given, then lower-cased).
 * ADAC_E_NOT_FOUND when the store has no such file; ADAC_E_IO with the reason (HTTP status, network
 * error, cache not writable) otherwise. */
int adac_store_get(const struct adac_store *st, const char *key, char *path, size_t size, bool *cached,
                   struct adac_error *err);

#endif
