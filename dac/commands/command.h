/* command.h - the command table shared by the front ends, and option-parsing helpers. */
#ifndef ADAC_COMMAND_H
#define ADAC_COMMAND_H

#include <stdbool.h>

#include "asyncdac.h"

typedef int (*adac_command_fn)(struct adac_target *t, enum adac_frontend fe, int argc, char **argv,
                               struct adac_out *out, struct adac_error *err);

/* Commands, one file each (cmd_<name>.c). */
extern const struct adac_command_info adac_cmd_runtime_info;
int adac_cmd_runtime(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                     struct adac_error *err);
extern const struct adac_command_info adac_cmd_bt_info;
int adac_cmd_bt(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                struct adac_error *err);
extern const struct adac_command_info adac_cmd_ip2md_info;
int adac_cmd_ip2md(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                   struct adac_error *err);
extern const struct adac_command_info adac_cmd_dumpheap_info;
int adac_cmd_dumpheap(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                      struct adac_error *err);
extern const struct adac_command_info adac_cmd_dumpmd_info;
int adac_cmd_dumpmd(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                    struct adac_error *err);
extern const struct adac_command_info adac_cmd_frame_info;
int adac_cmd_frame(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                   struct adac_error *err);
extern const struct adac_command_info adac_cmd_ps_info;
int adac_cmd_ps(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                struct adac_error *err);

extern const struct adac_command_info adac_cmd_dumpobj_info;
int adac_cmd_dumpobj(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                     struct adac_error *err);
extern const struct adac_command_info adac_cmd_pe_info;
int adac_cmd_pe(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                struct adac_error *err);
extern const struct adac_command_info adac_cmd_report_info;
int adac_cmd_report(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                    struct adac_error *err);
extern const struct adac_command_info adac_cmd_refs_info;
int adac_cmd_refs(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                  struct adac_error *err);
extern const struct adac_command_info adac_cmd_gcroot_info;
int adac_cmd_gcroot(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                    struct adac_error *err);
extern const struct adac_command_info adac_cmd_locks_info;
int adac_cmd_locks(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                   struct adac_error *err);
extern const struct adac_command_info adac_cmd_clrthreads_info;
int adac_cmd_clrthreads(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                        struct adac_error *err);
extern const struct adac_command_info adac_cmd_pstacks_info;
int adac_cmd_pstacks(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                     struct adac_error *err);
extern const struct adac_command_info adac_cmd_threadpool_info;
int adac_cmd_threadpool(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                        struct adac_error *err);
/* Two targets: run by adac_command_run_diff. */
extern const struct adac_command_info adac_cmd_diff_info;
int adac_cmd_diff(struct adac_target *a, struct adac_target *b, int argc, char **argv, struct adac_out *out,
                  struct adac_error *err);

extern const struct adac_command_info adac_cmd_symbols_info;
int adac_cmd_symbols(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                     struct adac_error *err);

/* Option helpers: true when argv[i] is `-s` or `--long`. */
bool adac_opt_is(const char *arg, const char *short_opt, const char *long_opt);
/* Parses a number (decimal or 0x hex) for option `opt`; ADAC_E_USAGE naming it otherwise. */
int adac_opt_u64(const char *cmd, const char *opt, const char *value, uint64_t *out, struct adac_error *err);
/* The value after option argv[*i] (advancing *i), or ADAC_E_USAGE when it is missing. */
int adac_opt_value(const char *cmd, int argc, char **argv, int *i, const char **value, struct adac_error *err);
int adac_opt_unknown(const char *cmd, const char *arg, struct adac_error *err);
/* The whole command line of a command taking one address and nothing else (`pe`, `refs`): syntax
 * names it ("<object address>"), need says what is missing ("an object address"). */
int adac_opt_only_address(const char *cmd, const char *syntax, const char *need, int argc, char **argv, uint64_t *addr,
                          struct adac_error *err);

/* A whole command whose only option is -j/--json (`report`, `locks`, `clrthreads`): parses it, acquires
 * the runtime and runs print. */
struct adac_runtime;
typedef int (*adac_json_view_fn)(struct adac_runtime *rt, bool json, struct adac_out *out, struct adac_error *err);
int adac_command_json_view(const char *cmd, struct adac_target *t, int argc, char **argv, adac_json_view_fn print,
                           struct adac_out *out, struct adac_error *err);

/* The number option --thread names a thread by: its LLDB index in LLDB, its OS thread id in the
 * CLI; and the error for a number no thread has. */
uint64_t adac_opt_thread_id(enum adac_frontend fe, const struct adac_thread *th);
int adac_opt_no_thread(enum adac_frontend fe, uint64_t id, struct adac_error *err);

#endif
