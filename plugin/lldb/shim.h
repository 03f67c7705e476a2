/* shim.h - the C face of LLDB's SB API, implemented in shim.cpp (the plugin's only C++ file).
 *
 * No SB type crosses this header: a command invocation and a process are opaque handles. Errors
 * follow dac/'s convention (0 or -1 with err filled; the first cause wins). */
#ifndef ADAC_LLDB_SHIM_H
#define ADAC_LLDB_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {  /* dac/'s headers have no guards of their own */
#endif

#include "target/target.h"

/* ---- one command invocation (an SBDebugger and the command's SBCommandReturnObject) ---- */

struct adac_lldb_cmd;

/* Appends len bytes to the command's output (held until the command ends; past 1 MiB at LLDB's prompt,
 * printed as it is written: shim.cpp). */
void adac_lldb_cmd_write(struct adac_lldb_cmd *cmd, const char *text, size_t len);

/* Fails the command with a one-line message; LLDB prints it as "error: <msg>" and `lldb -b`
 * exits non-zero. */
void adac_lldb_cmd_error(struct adac_lldb_cmd *cmd, const char *msg);

/* The command's progress reports (ended with the command). */
struct adac_lldb_progress *adac_lldb_cmd_progress(struct adac_lldb_cmd *cmd);

/* The user asked the command to stop: Ctrl-C in lldb, an IDE's cancel through lldb-dap, an SB
 * client's SBDebugger::RequestInterrupt. Call on the command's thread. */
bool adac_lldb_cmd_interrupted(struct adac_lldb_cmd *cmd);

/* Runs command_line through the command interpreter into this command's own result, so its
 * output, error text and status become ours unchanged. Returns 0 when it succeeded, else -1. */
int adac_lldb_cmd_forward(struct adac_lldb_cmd *cmd, const char *command_line);

/* The value of a string setting ("" when unset) into buf (truncated); returns its length. */
size_t adac_lldb_cmd_setting(struct adac_lldb_cmd *cmd, const char *name, char *buf, size_t size);

/* The strings of a list setting ("target.debug-file-search-paths"), each followed by a newline,
 * in a new string (caller frees); "" when the list is empty, NULL when there is no such setting. */
char *adac_lldb_cmd_setting_list(struct adac_lldb_cmd *cmd, const char *setting);


/* ---- LLDB progress reports (its statusline; an IDE's progress through lldb-dap) ---- */

struct adac_lldb_progress;

/* Reports of debugger `id` (SBDebugger::GetID) for work that is no command (the threads of a
 * stop); NULL when there is no such debugger or memory runs out. */
struct adac_lldb_progress *adac_lldb_progress_new(uint64_t debugger_id);

/* Shows how far the work is: title ("Scanning the heap") with details (the command), done of total
 * units (total 0: unknown). A new title or total starts a new report and ends the last; title NULL
 * ends it. */
void adac_lldb_progress_show(struct adac_lldb_progress *p, const char *title, const char *details, uint64_t done,
                             uint64_t total);

/* Ends its report; p from adac_lldb_progress_new. */
void adac_lldb_progress_free(struct adac_lldb_progress *p);

/* ---- the process of the debugger's selected target ---- */

enum adac_lldb_state {
	ADAC_LLDB_NO_PROCESS,  /* no target, no process, or it exited / detached */
	ADAC_LLDB_RUNNING,     /* running, stepping, launching or attaching: not readable consistently */
	ADAC_LLDB_STOPPED,     /* stopped, crashed or suspended; a core is always stopped */
};

/* State of the selected process and, when there is one, its unique id (never reused within
 * one lldb session, so it tells a re-launched or newly loaded process from the old one). */
enum adac_lldb_state adac_lldb_cmd_process_state(struct adac_lldb_cmd *cmd, uint64_t *unique_id);

struct adac_lldb_process;

/* A handle on the selected process (NULL with err when there is none). It holds LLDB's process
 * weakly: once LLDB drops the process, every call below fails instead of touching freed state. */
struct adac_lldb_process *adac_lldb_process_open(struct adac_lldb_cmd *cmd, struct adac_error *err);
void adac_lldb_process_close(struct adac_lldb_process *p);

/* A handle on the process of target `target_id` (SBTarget::GetGloballyUniqueID) of the debugger
 * with id `debugger_id`; NULL with err when either is gone or the target has no process. */
struct adac_lldb_process *adac_lldb_process_find(uint64_t debugger_id, uint64_t target_id, struct adac_error *err);

/* LLDB still has the process (it did not exit, detach or get deleted). */
bool adac_lldb_process_alive(struct adac_lldb_process *p);
/* Stopped, crashed or suspended (a core is always stopped): its memory can be read consistently. */
bool adac_lldb_process_stopped(struct adac_lldb_process *p);
/* SBProcess::GetUniqueID. */
uint64_t adac_lldb_process_unique_id(struct adac_lldb_process *p);

/* SBProcess::GetStopID, counting expression evaluations too: changes whenever the process ran. */
uint64_t adac_lldb_process_stop_id(struct adac_lldb_process *p);

/* The tid of the process's selected thread (`thread select`, or where it stopped), 0 if none. */
uint64_t adac_lldb_process_selected_thread(struct adac_lldb_process *p);

/* Reads up to len bytes at addr; returns how many bytes were read from the start of the range
 * (the target.h `read` contract), or -1 with err when the process is gone. Tries
 * SBProcess::ReadMemory whole, then page by page; a page the process cannot supply (a core lacks
 * file-backed read-only pages) is read from the module's file through SBTarget::ReadMemory and
 * SBSection::GetSectionData, as SOS's ReadVirtual does. */
int64_t adac_lldb_process_read(struct adac_lldb_process *p, uint64_t addr, void *buf, size_t len,
                               struct adac_error *err);

/* The pid of a live process LLDB debugs on this machine (platform "host", process plugin
 * "gdb-remote"), whose memory is then this machine's /proc/<pid>/mem; 0 for a core or a process
 * on another machine. */
uint64_t adac_lldb_process_local_pid(struct adac_lldb_process *p);

/* The path of the ELF core file LLDB reads the process from (process plugin "elf-core") into buf;
 * -1 for a live process, another kind of core, or a path longer than size. */
int adac_lldb_process_core_file(struct adac_lldb_process *p, char *buf, size_t size);

/* The load addresses of the target's enabled, resolved breakpoint locations (where LLDB may have
 * written a trap into the process's code), up to cap of them; returns how many there are. */
size_t adac_lldb_process_breakpoint_sites(struct adac_lldb_process *p, uint64_t *addrs, size_t cap);

/* Calls cb once per loaded module (SBTarget modules, including the [vdso]): path as LLDB names it,
 * base = lowest load address of the file's offset-0 segment, end = page end of the file bytes of
 * its highest loaded segment, build-id from SBModule::GetUUIDString when it is a GNU build-id.
 * Modules without a load address are skipped. */
int adac_lldb_process_modules(struct adac_lldb_process *p, adac_module_cb cb, void *ctx, struct adac_error *err);

/* Calls cb once per thread in LLDB's order (index id, tid, name). */
int adac_lldb_process_threads(struct adac_lldb_process *p, adac_thread_cb cb, void *ctx, struct adac_error *err);

/* Registers rax..r15, rip, fs_base of frame 0 of thread tid (SBFrame::FindRegister). Registers
 * LLDB does not have stay 0; rip and rsp are required (LLDB has fs_base on x86-64 Linux since
 * LLDB 17). */
int adac_lldb_process_regs(struct adac_lldb_process *p, uint64_t tid, struct adac_regs *regs,
                           struct adac_error *err);

/* Whether LLDB shows frames of thread tid that a frame provider made (SBFrame::IsSynthetic): then
 * they are not the unwinder's. Builds the frames (running the providers) if LLDB has not yet. */
bool adac_lldb_process_frames_replaced(struct adac_lldb_process *p, uint64_t tid);

/* LLDB's physical frames of thread tid, innermost first. Module and symbol strings stay valid
 * for the session; the source file's full path only during the callback. */
int adac_lldb_process_frames(struct adac_lldb_process *p, uint64_t tid, adac_frame_cb cb, void *ctx,
                             struct adac_error *err);

/* ---- a frame provider's input frames ---- */

/* The frames of the lldb::SBFrameList at address `list` (a frame provider's input frames: the
 * Python adapter passes SWIG's `this` of the object it holds), innermost first, as
 * adac_lldb_process_frames gives a thread's (one C++ call for what took Python about 15 SB calls a
 * frame). */
int adac_lldb_frame_list_frames(uint64_t list, adac_frame_cb cb, void *ctx, struct adac_error *err);

/* The registers of its innermost frame, as adac_lldb_process_regs. */
int adac_lldb_frame_list_regs(uint64_t list, struct adac_regs *regs, struct adac_error *err);

#ifdef __cplusplus
}
#endif

#endif
