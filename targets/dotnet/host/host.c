/*
 * dnhost: a minimal CoreCLR host used to run the asyncdac sample apps on a
 * runtime that is not installed (the Microsoft.NETCore.App.Runtime.linux-x64
 * NuGet pack), or on any "shared framework" directory.
 *
 * Usage: dnhost <framework-dirs> <app.dll> [app args...]
 *
 *   <framework-dirs>  colon-separated list of directories.  libcoreclr.so is
 *                     loaded from the first one that contains it; every *.dll
 *                     in all of them (plus the app's own directory) goes into
 *                     the TRUSTED_PLATFORM_ASSEMBLIES list, and all of them go
 *                     into NATIVE_DLL_SEARCH_DIRECTORIES.
 *
 * Examples:
 *   dnhost PACK/runtimes/linux-x64/native:PACK/runtimes/linux-x64/lib/net11.0 app.dll
 *   dnhost /usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12 app.dll
 *
 * Runtime configuration knobs (DOTNET_*) are read from the environment by the
 * runtime itself, as with the regular `dotnet` host.
 *
 * This is a debuggee, not product code: it favours simplicity.  It exits with
 * the managed Main's exit code, or 120-129 for host failures.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*coreclr_initialize_fn)(const char *exePath, const char *appDomainFriendlyName,
                                     int propertyCount, const char **propertyKeys,
                                     const char **propertyValues, void **hostHandle,
                                     unsigned int *domainId);
typedef int (*coreclr_execute_assembly_fn)(void *hostHandle, unsigned int domainId, int argc,
                                           const char **argv, const char *managedAssemblyPath,
                                           unsigned int *exitCode);
typedef int (*coreclr_shutdown_2_fn)(void *hostHandle, unsigned int domainId,
                                     int *latchedExitCode);

struct strbuf {
    char *p;
    size_t len;
    size_t cap;
};

static void die(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("dnhost: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(code);
}

static void sb_append(struct strbuf *sb, const char *s)
{
    size_t n = strlen(s);
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 4096;
        while (sb->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(sb->p, cap);
        if (p == NULL)
            die(121, "out of memory");
        sb->p = p;
        sb->cap = cap;
    }
    memcpy(sb->p + sb->len, s, n + 1);
    sb->len += n;
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/* Simple-name set so that the first directory wins when a dll appears twice. */
struct nameset {
    char **names;
    size_t count;
    size_t cap;
};

static int nameset_add(struct nameset *ns, const char *name)
{
    for (size_t i = 0; i < ns->count; i++)
        if (strcmp(ns->names[i], name) == 0)
            return 0;
    if (ns->count == ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 256;
        char **p = realloc(ns->names, cap * sizeof(*p));
        if (p == NULL)
            die(121, "out of memory");
        ns->names = p;
        ns->cap = cap;
    }
    ns->names[ns->count] = strdup(name);
    if (ns->names[ns->count] == NULL)
        die(121, "out of memory");
    ns->count++;
    return 1;
}

static void add_dir_dlls(struct strbuf *tpa, struct nameset *seen, const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        die(122, "cannot open directory %s: %s", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!has_suffix(e->d_name, ".dll"))
            continue;
        if (!nameset_add(seen, e->d_name))
            continue;
        if (tpa->len)
            sb_append(tpa, ":");
        sb_append(tpa, dir);
        sb_append(tpa, "/");
        sb_append(tpa, e->d_name);
    }
    closedir(d);
}

static char *xrealpath(const char *p)
{
    char *r = realpath(p, NULL);
    if (r == NULL)
        die(122, "cannot resolve %s: %s", p, strerror(errno));
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <framework-dir[:dir...]> <app.dll> [args...]\n", argv[0]);
        return 120;
    }

    char *app = xrealpath(argv[2]);
    char *appdir = strdup(app);
    if (appdir == NULL)
        die(121, "out of memory");
    char *slash = strrchr(appdir, '/');
    if (slash != NULL)
        *slash = '\0';

    struct strbuf tpa = {0}, native = {0};
    struct nameset seen = {0};
    char coreclr_path[PATH_MAX] = "";

    /* The app directory first, so that the app's own assemblies win. */
    add_dir_dlls(&tpa, &seen, appdir);
    sb_append(&native, appdir);

    char *dirs = strdup(argv[1]);
    if (dirs == NULL)
        die(121, "out of memory");
    for (char *save = NULL, *tok = strtok_r(dirs, ":", &save); tok != NULL;
         tok = strtok_r(NULL, ":", &save)) {
        char *dir = xrealpath(tok);
        add_dir_dlls(&tpa, &seen, dir);
        sb_append(&native, ":");
        sb_append(&native, dir);
        if (coreclr_path[0] == '\0') {
            char cand[PATH_MAX];
            struct stat st;
            if (snprintf(cand, sizeof cand, "%s/libcoreclr.so", dir) < (int)sizeof cand &&
                stat(cand, &st) == 0)
                memcpy(coreclr_path, cand, sizeof cand);
        }
        free(dir);
    }
    free(dirs);
    if (coreclr_path[0] == '\0')
        die(123, "libcoreclr.so not found in %s", argv[1]);

    void *lib = dlopen(coreclr_path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        die(124, "dlopen %s: %s", coreclr_path, dlerror());

    coreclr_initialize_fn init = (coreclr_initialize_fn)dlsym(lib, "coreclr_initialize");
    coreclr_execute_assembly_fn exec =
        (coreclr_execute_assembly_fn)dlsym(lib, "coreclr_execute_assembly");
    coreclr_shutdown_2_fn shutdown2 = (coreclr_shutdown_2_fn)dlsym(lib, "coreclr_shutdown_2");
    if (init == NULL || exec == NULL || shutdown2 == NULL)
        die(124, "%s lacks the hosting API", coreclr_path);

    const char *keys[] = {
        "TRUSTED_PLATFORM_ASSEMBLIES",
        "APP_PATHS",
        "NATIVE_DLL_SEARCH_DIRECTORIES",
        "System.GC.Server",
        "System.Globalization.Invariant",
    };
    const char *values[] = {
        tpa.p, appdir, native.p, "false", "true",
    };

    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0)
        die(122, "readlink /proc/self/exe: %s", strerror(errno));
    exe[n] = '\0';

    void *host = NULL;
    unsigned int domain = 0;
    int rc = init(exe, "dnhost", (int)(sizeof keys / sizeof keys[0]), keys, values, &host,
                  &domain);
    if (rc < 0)
        die(125, "coreclr_initialize failed: 0x%08x", (unsigned)rc);

    unsigned int exit_code = 0;
    rc = exec(host, domain, argc - 3, (const char **)(argv + 3), app, &exit_code);
    if (rc < 0)
        die(126, "coreclr_execute_assembly failed: 0x%08x", (unsigned)rc);

    int latched = 0;
    rc = shutdown2(host, domain, &latched);
    if (rc < 0)
        die(127, "coreclr_shutdown_2 failed: 0x%08x", (unsigned)rc);
    return (int)exit_code;
}
