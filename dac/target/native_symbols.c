/* native_symbols.c - finding the ELF and debug files of native modules for libdwfl. */
#include "target/native_symbols.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/limits.h"
#include "target/symbol_store.h"
#include "target/symbols.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

struct wanted {
	const unsigned char *build_id;  /* the module's, from memory; NULL when it has none */
	int build_id_len;
	bool debug;                     /* a debug file: it must have a .symtab or DWARF */
};

/* Does the ELF file at path have the wanted build-id? (Any file will do for a module without one.) */
static bool matches(const struct wanted *w, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool ok = elf && elf_kind(elf) == ELF_K_ELF;
	if (ok && w->build_id) {
		const void *id;
		ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
		ok = n == w->build_id_len && memcmp(id, w->build_id, (size_t)n) == 0;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

static int check_build_id(void *ctx, const char *path, char *why, size_t why_size)
{
	if (matches(ctx, path))
		return 0;
	snprintf(why, why_size, "has another build-id");
	return -1;
}

/* Opens path for libdwfl: the fd, and *name a malloc'd copy of the path; -1 when it is not there or
 * not the wanted file. */
static int hand_over(const struct wanted *w, const char *path, char **name)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !matches(w, path))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !(*name = strdup(path))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* /usr/lib/debug/.build-id/xx/yyyy[.debug] */
static int by_system_build_id(const struct wanted *w, char **name)
{
	if (!w->build_id || w->build_id_len < 2)
		return -1;
	char path[ADAC_MAX_PATH_BYTES];
	size_t n = (size_t)snprintf(path, sizeof path, SYSTEM_DEBUG_DIR "/.build-id/%02x/", w->build_id[0]);
	for (int i = 1; i < w->build_id_len && n + 3 < sizeof path; i++)
		n += (size_t)snprintf(path + n, sizeof path - n, "%02x", w->build_id[i]);
	if (w->debug)
		snprintf(path + n, sizeof path - n, ".debug");
	return hand_over(w, path, name);
}

/* The symbol path, symbol servers and debuginfod; name_hint names the file in directories. */
static int by_symbol_path(const struct adac_native_symbols *ctx, struct wanted *w, const char *name_hint,
                          char **name)
{
	if (!w->build_id)
		return -1; /* nothing to check a file found by name against */
	char key[ADAC_MAX_PATH_BYTES];
	int keyed = w->debug ? adac_ssqp_key_elf_debug(w->build_id, (size_t)w->build_id_len, key, sizeof key, NULL)
	                     : adac_ssqp_key_elf(name_hint, w->build_id, (size_t)w->build_id_len, key, sizeof key, NULL);
	struct adac_symbol_want want = {.name = name_hint, .key = keyed == 0 ? key : NULL, .build_id = w->build_id,
	                                .build_id_len = (size_t)w->build_id_len,
	                                .kind = w->debug ? ADAC_SYMBOL_DEBUG : ADAC_SYMBOL_BINARY,
	                                .check = check_build_id, .ctx = w};
	struct adac_symbol_found found;
	if (adac_symbols_find(ctx ? ctx->symbols : NULL, &want, &found, NULL) != 0)
		return -1;
	return hand_over(w, found.path, name);
}

static void module_build_id(Dwfl_Module *mod, struct wanted *w)
{
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &w->build_id, &vaddr);
	w->build_id_len = n > 0 ? n : 0;
	if (n <= 0)
		w->build_id = NULL;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, char **file_name,
                    Elf **elfp)
{
	(void)base;
	(void)elfp;
	struct wanted w = {0};
	module_build_id(mod, &w);
	int fd = modname && modname[0] == '/' ? hand_over(&w, modname, file_name) : -1;
	if (fd < 0)
		fd = by_system_build_id(&w, file_name);
	if (fd < 0 && modname && *modname)
		fd = by_symbol_path(*userdata, &w, base_name(modname), file_name);
	return fd;
}

/* dir/sub/link */
static int in_dir(const struct wanted *w, const char *dir, const char *sub, const char *link, char **name)
{
	char path[ADAC_MAX_PATH_BYTES];
	int n = snprintf(path, sizeof path, "%s%s%s", dir, sub, link);
	return n > 0 && (size_t)n < sizeof path ? hand_over(w, path, name) : -1;
}

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                          char **debuginfo_file_name)
{
	(void)base;
	(void)debuglink_crc; /* candidates are checked by build-id instead */
	struct wanted w = {.debug = true};
	module_build_id(mod, &w);
	int fd = by_system_build_id(&w, debuginfo_file_name);
	/* .gnu_debuglink: beside the file, in its .debug/, under /usr/lib/debug/<its directory>/. */
	const char *main_path = file_name ? file_name : modname;
	if (fd < 0 && debuglink_file && main_path && main_path[0] == '/') {
		char dir[ADAC_MAX_PATH_BYTES];
		snprintf(dir, sizeof dir, "%.*s", (int)(base_name(main_path) - main_path), main_path);
		char sys[ADAC_MAX_PATH_BYTES + sizeof SYSTEM_DEBUG_DIR];
		snprintf(sys, sizeof sys, SYSTEM_DEBUG_DIR "%s", dir);
		fd = in_dir(&w, dir, "", debuglink_file, debuginfo_file_name);
		if (fd < 0)
			fd = in_dir(&w, dir, ".debug/", debuglink_file, debuginfo_file_name);
		if (fd < 0)
			fd = in_dir(&w, sys, "", debuglink_file, debuginfo_file_name);
	}
	if (fd < 0 && modname) {
		/* In directories the file goes by its debuglink name, else .NET's convention (x.so.dbg). */
		char hint[ADAC_MAX_PATH_BYTES];
		snprintf(hint, sizeof hint, "%s%s", debuglink_file ? debuglink_file : base_name(modname),
		         debuglink_file ? "" : ".dbg");
		fd = by_symbol_path(*userdata, &w, hint, debuginfo_file_name);
	}
	return fd;
}

const Dwfl_Callbacks adac_native_core_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
};

/* A live process's module: the file at its path as the process sees it (a process in a container
 * names the container's files: never the host's at the same path), else libdwfl's way (a deleted
 * file and the vDSO are read from memory). */
static int find_proc_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, char **file_name,
                         Elf **elfp)
{
	const struct adac_native_symbols *ctx = *userdata;
	char path[ADAC_MAX_PATH_BYTES];
	struct stat st;
	if (ctx && adac_proc_root_path(ctx->root, modname, path, sizeof path) == 0) {
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			return strstr(modname, " (deleted)") ? dwfl_linux_proc_find_elf(mod, userdata, modname, base, file_name, elfp)
			                                     : -1;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !(*file_name = strdup(path))) {
			close(fd);
			fd = -1;
		}
		return fd;
	}
	return dwfl_linux_proc_find_elf(mod, userdata, modname, base, file_name, elfp);
}

const Dwfl_Callbacks adac_native_proc_callbacks = {
	.find_elf = find_proc_elf,
	.find_debuginfo = find_debuginfo,
};

static int attach_one(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)mod;
	(void)name;
	(void)start;
	*userdata = arg;
	return DWARF_CB_OK;
}

void adac_native_symbols_attach(Dwfl *dwfl, struct adac_native_symbols *ctx)
{
	dwfl_getmodules(dwfl, attach_one, ctx, 0);
}
