// shim.cpp - the SB bridge: implements shim.h, which hands plain C types to target_lldb.c and
// commands.c. With entry.cpp, the only code that includes LLDB's API. Nothing here decides what a
// command prints.
#include <lldb/API/LLDB.h>

#include <algorithm>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "shim.h"
#include "shim_symbols.h"

#include "shim_sb.h"

namespace {

constexpr uint64_t kPage = 4096;

lldb::SBTarget target_of(adac_lldb_process *p)
{
	return p->process.GetTarget();
}

bool process_alive(adac_lldb_process *p, adac_error *err)
{
	if (p->process.IsValid())
		return true;
	adac_fail(err, ADAC_E_IO, 0, "the process is gone");
	return false;
}

// Bytes at addr that LLDB can only supply from a module's file: read-only sections (code, rodata,
// symbol tables) whose pages a core file does not contain. Returns the bytes read (maybe 0).
size_t read_from_file(adac_lldb_process *p, uint64_t addr, uint8_t *buf, size_t len)
{
	lldb::SBTarget target = target_of(p);
	lldb::SBAddress a = target.ResolveLoadAddress(addr);
	lldb::SBSection sec = a.GetSection();
	if (!a.IsValid() || !sec.IsValid())
		return 0;
	uint32_t perm = sec.GetPermissions();
	if (!(perm & lldb::ePermissionsReadable) || (perm & lldb::ePermissionsWritable))
		return 0;
	uint64_t off = a.GetOffset();
	uint64_t file_size = sec.GetFileByteSize();
	if (off >= file_size)
		return 0;
	size_t n = (size_t)std::min<uint64_t>(len, file_size - off);
	lldb::SBError e;
	size_t got = target.ReadMemory(a, buf, n, e);
	if (got > 0)
		return got;
	lldb::SBData data = sec.GetSectionData(off, n);
	lldb::SBError de;
	if (data.IsValid() && data.GetByteSize() >= n && data.ReadRawData(de, 0, buf, n) == n && de.Success())
		return n;
	return 0;
}

// "5a1b...-..." (LLDB's UUID text) to bytes; false unless it is a plausible GNU build-id.
bool parse_build_id(const char *text, uint8_t *out, size_t *len)
{
	size_t n = 0;
	int hi = -1;
	for (const char *s = text; *s; s++) {
		if (*s == '-')
			continue;
		int v = (*s >= '0' && *s <= '9') ? *s - '0'
		        : (*s >= 'a' && *s <= 'f') ? *s - 'a' + 10
		        : (*s >= 'A' && *s <= 'F') ? *s - 'A' + 10 : -1;
		if (v < 0)
			return false;
		if (hi < 0) {
			hi = v;
			continue;
		}
		if (n == ADAC_BUILD_ID_MAX)
			return false;
		out[n++] = (uint8_t)(hi << 4 | v);
		hi = -1;
	}
	// LLDB falls back to a 4-byte .gnu_debuglink CRC when there is no build-id: not one.
	if (hi >= 0 || n < 8)
		return false;
	*len = n;
	return true;
}

lldb::SBThread thread_by_tid(adac_lldb_process *p, uint64_t tid, adac_error *err)
{
	lldb::SBThread th = p->process.GetThreadByID(tid);
	if (!th.IsValid())
		adac_fail(err, ADAC_E_NOT_FOUND, 0, "no thread with tid %" PRIu64 " in the process", tid);
	return th;
}

// An address for dac/: LLDB's "invalid" (all ones) becomes 0, "unknown".
uint64_t address(uint64_t v)
{
	return v < (uint64_t)1 << 63 ? v : 0;
}

// One of LLDB's frames as dac/ takes it. LLDB's module and symbol names live in its string pool
// for the whole session; the source file's full path is written to path. A frame LLDB names from
// the plugin's own symbol file is left to dac/ to name, as on the other backends (which do not
// load it).
void describe_frame(lldb::SBFrame fr, lldb::SBTarget target, char *path, size_t size, adac_frame *f)
{
	std::memset(f, 0, sizeof *f);
	f->pc = address(fr.GetPC());
	f->sp = address(fr.GetSP());
	f->fp = address(fr.GetFP());
	lldb::SBModule mod = fr.GetModule();
	if (mod.IsValid() && mod.GetFileSpec().GetPath(path, size) && adac_lldb_is_symbols_file(path))
		return;
	if (mod.IsValid())
		f->module = mod.GetFileSpec().GetFilename();
	lldb::SBSymbol sym = fr.GetSymbol();
	if (sym.IsValid() && sym.GetName()) {
		f->symbol = sym.GetName();
		uint64_t start = sym.GetStartAddress().GetLoadAddress(target);
		f->sym_offset = (start != LLDB_INVALID_ADDRESS && f->pc >= start) ? f->pc - start : 0;
	}
	lldb::SBLineEntry line = fr.GetLineEntry();
	if (line.IsValid() && line.GetFileSpec().IsValid()) {
		uint32_t n = line.GetFileSpec().GetPath(path, size);
		f->file = n > 0 && n < size ? path : line.GetFileSpec().GetFilename();
		f->line = line.GetLine();
	}
}

// The first n frames of a thread or a frame list (both have GetFrameAtIndex; copies of either share
// LLDB's object), innermost first, through cb; each frame's source file is valid during its
// callback.
template <typename Frames>
void describe_frames(Frames frames, uint32_t n, lldb::SBTarget target, adac_frame_cb cb, void *ctx)
{
	char path[4096];
	for (uint32_t i = 0; i < n; i++) {
		lldb::SBFrame fr = frames.GetFrameAtIndex(i);
		if (!fr.IsValid())
			break;
		struct adac_frame f;
		describe_frame(fr, target, path, sizeof path, &f);
		if (cb(ctx, &f))
			break;
	}
}

// The registers of a thread's innermost frame (thread tid, for the message).
int frame_regs(lldb::SBFrame frame, uint64_t tid, adac_regs *regs, adac_error *err)
{
	static const char *const names[ADAC_REG_COUNT] = {
		"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8",  "r9",
		"r10", "r11", "r12", "r13", "r14", "r15", "rip", "fs_base",
	};
	if (!frame.IsValid())
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "thread %" PRIu64 " has no frame", tid);
	std::memset(regs, 0, sizeof *regs);
	for (int r = 0; r < ADAC_REG_COUNT; r++) {
		lldb::SBValue v = frame.FindRegister(names[r]);
		lldb::SBError e;
		uint64_t value = v.IsValid() ? v.GetValueAsUnsigned(e, 0) : 0;
		if (!v.IsValid() || e.Fail()) {
			if (r == ADAC_REG_RIP || r == ADAC_REG_RSP)
				return adac_fail(err, ADAC_E_READ, 0, "cannot read register %s of thread %" PRIu64, names[r], tid);
			continue;
		}
		regs->r[r] = value;
	}
	return 0;
}

}  // namespace

// ---- commands ----

namespace {

// LLDB prints a command's result once the command ends, a line at a time (two writes a line): 10.7 s
// for the 756 MB that `async ps` lists of a million chains, against about 4 s printed as it is
// written. So a command run at LLDB's prompt (or from `lldb -o`: the command interpreter is the
// active input, IsActive) whose output passes this size has its result printed as it is written,
// LLDB's immediate output stream: LLDB prints no more of it at the end. The result keeps the text
// too: a script at the prompt that runs such a command into a result of its own reads it there (and
// the text is printed as well). lldb-dap and SB API programs run no prompt: their results print
// nothing, as before. Below the size, output is as any command's.
constexpr size_t IMMEDIATE_AFTER = 1u << 20;
// Past it, output goes to the result by this much: a write (and LLDB's formatting) a chunk, not one
// for each piece the library prints (two per stack of `async ps`: 2 M for a million chains).
constexpr size_t WRITE_CHUNK = 64u << 10;

void append(lldb::SBCommandReturnObject *result, const char *text, size_t len)
{
	// Printf, not PutCString: that one trims the text and appends a newline.
	while (len > 0) {
		int n = (int)std::min<size_t>(len, 1u << 30);
		result->Printf("%.*s", n, text);
		text += n;
		len -= (size_t)n;
	}
}

// The result is the prompt's, and no one else prints it as it is written (GetOutput(true) is NULL
// once an immediate stream is set).
bool prompt_result(adac_lldb_cmd *cmd)
{
	return cmd->debugger.GetCommandInterpreter().IsActive() && cmd->result->GetOutput(true) != nullptr;
}

}  // namespace

void adac_lldb_cmd_write(adac_lldb_cmd *cmd, const char *text, size_t len)
{
	cmd->held.append(text, len);
	if (!cmd->past_hold) {
		if (cmd->held.size() < IMMEDIATE_AFTER)
			return;
		if (prompt_result(cmd))
			cmd->result->SetImmediateOutputFile(cmd->debugger.GetOutputFile());
		cmd->past_hold = true;
	}
	if (cmd->held.size() >= WRITE_CHUNK)
		adac_lldb_cmd_flush(cmd);
}

void adac_lldb_cmd_flush(adac_lldb_cmd *cmd)
{
	append(cmd->result, cmd->held.data(), cmd->held.size());
	std::string().swap(cmd->held);
}

adac_lldb_progress *adac_lldb_cmd_progress(adac_lldb_cmd *cmd)
{
	return &cmd->progress;
}

adac_lldb_progress *adac_lldb_progress_new(uint64_t debugger_id)
{
	lldb::SBDebugger debugger = lldb::SBDebugger::FindDebuggerWithID((int)debugger_id);
	if (!debugger.IsValid())
		return nullptr;
	return new (std::nothrow) adac_lldb_progress{debugger};
}

void adac_lldb_progress_show(adac_lldb_progress *p, const char *title, const char *details, uint64_t done,
                             uint64_t total)
{
	if (p->report && (!title || p->title != title || p->total != total)) {
		p->report->Finalize();
		p->report.reset();
	}
	if (!title)
		return;
	if (!p->report) {
		p->report = total ? std::make_unique<lldb::SBProgress>(title, details, total, p->debugger)
		                  : std::make_unique<lldb::SBProgress>(title, details, p->debugger);
		p->title = title;
		p->total = total;
		p->done = 0;
	}
	if (done > p->done) {
		p->report->Increment(done - p->done);
		p->done = done;
	}
}

void adac_lldb_progress_free(adac_lldb_progress *p)
{
	delete p;  // (an SBProgress destroyed ends its report)
}

bool adac_lldb_cmd_interrupted(adac_lldb_cmd *cmd)
{
	return cmd->debugger.InterruptRequested();
}

void adac_lldb_cmd_error(adac_lldb_cmd *cmd, const char *msg)
{
	cmd->result->SetError(msg);
}

char *adac_lldb_cmd_setting_list(adac_lldb_cmd *cmd, const char *setting)
{
	lldb::SBStructuredData list = cmd->debugger.GetSetting(setting);
	if (!list.IsValid() || list.GetType() != lldb::eStructuredDataTypeArray)
		return nullptr;
	std::string text;
	for (size_t i = 0; i < list.GetSize(); i++) {
		lldb::SBStructuredData item = list.GetItemAtIndex(i);
		size_t n = item.GetStringValue(nullptr, 0);
		std::string value(n + 1, '\0');
		item.GetStringValue(&value[0], n + 1);
		value.resize(n);
		text += value;
		text += '\n';
	}
	return strdup(text.c_str());
}


int adac_lldb_cmd_forward(adac_lldb_cmd *cmd, const char *command_line)
{
	// The nested command writes into our own result object: output, error text (with LLDB's own
	// "error: " prefix and colours) and status come out exactly as if it had been typed.
	adac_lldb_cmd_flush(cmd);
	lldb::SBCommandInterpreter ci = cmd->debugger.GetCommandInterpreter();
	ci.HandleCommand(command_line, *cmd->result, false);
	return cmd->result->Succeeded() ? 0 : -1;
}

size_t adac_lldb_cmd_setting(adac_lldb_cmd *cmd, const char *name, char *buf, size_t size)
{
	if (size == 0)
		return 0;
	buf[0] = '\0';
	cmd->debugger.GetSetting(name).GetStringValue(buf, size);
	return std::strlen(buf);
}

adac_lldb_state adac_lldb_cmd_process_state(adac_lldb_cmd *cmd, uint64_t *unique_id)
{
	lldb::SBProcess process = cmd->debugger.GetSelectedTarget().GetProcess();
	if (!process.IsValid())
		return ADAC_LLDB_NO_PROCESS;
	*unique_id = process.GetUniqueID();
	switch (process.GetState()) {
	case lldb::eStateStopped:
	case lldb::eStateCrashed:
	case lldb::eStateSuspended:
		return ADAC_LLDB_STOPPED;
	case lldb::eStateRunning:
	case lldb::eStateStepping:
	case lldb::eStateLaunching:
	case lldb::eStateAttaching:
		return ADAC_LLDB_RUNNING;
	default:
		return ADAC_LLDB_NO_PROCESS;
	}
}

// ---- process ----

namespace {

adac_lldb_process *process_handle(lldb::SBProcess process, adac_error *err)
{
	if (!process.IsValid()) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "no process");
		return nullptr;
	}
	adac_lldb_process *p = new (std::nothrow) adac_lldb_process{process};
	if (!p)
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	return p;
}

}  // namespace

adac_lldb_process *adac_lldb_process_open(adac_lldb_cmd *cmd, adac_error *err)
{
	return process_handle(cmd->debugger.GetSelectedTarget().GetProcess(), err);
}

void adac_lldb_process_close(adac_lldb_process *p)
{
	delete p;
}

adac_lldb_process *adac_lldb_process_find(uint64_t debugger_id, uint64_t target_id, adac_error *err)
{
	lldb::SBDebugger debugger = lldb::SBDebugger::FindDebuggerWithID((int)debugger_id);
	lldb::SBTarget target = debugger.IsValid() ? debugger.FindTargetByGloballyUniqueID(target_id) : lldb::SBTarget();
	return process_handle(target.IsValid() ? target.GetProcess() : lldb::SBProcess(), err);
}

bool adac_lldb_process_alive(adac_lldb_process *p)
{
	if (!p->process.IsValid())
		return false;
	lldb::StateType state = p->process.GetState();
	return state != lldb::eStateExited && state != lldb::eStateDetached && state != lldb::eStateInvalid;
}

bool adac_lldb_process_stopped(adac_lldb_process *p)
{
	if (!p->process.IsValid())
		return false;
	lldb::StateType state = p->process.GetState();
	return state == lldb::eStateStopped || state == lldb::eStateCrashed || state == lldb::eStateSuspended;
}

uint64_t adac_lldb_process_unique_id(adac_lldb_process *p)
{
	return p->process.GetUniqueID();
}

uint64_t adac_lldb_process_stop_id(adac_lldb_process *p)
{
	return p->process.GetStopID(true);
}

uint64_t adac_lldb_process_selected_thread(adac_lldb_process *p)
{
	lldb::SBThread th = p->process.GetSelectedThread();
	return th.IsValid() ? th.GetThreadID() : 0;
}

int64_t adac_lldb_process_read(adac_lldb_process *p, uint64_t addr, void *buf, size_t len, adac_error *err)
{
	if (!process_alive(p, err))
		return -1;
	uint8_t *out = static_cast<uint8_t *>(buf);
	lldb::SBError e;
	if (len == 0 || p->process.ReadMemory(addr, out, len, e) == len)
		return (int64_t)len;
	// LLDB reads all or nothing, and a core's segments end at page boundaries: go page by page,
	// and within a page, section by section from the module file for what the core lacks.
	size_t done = 0;
	while (done < len) {
		uint64_t a = addr + done;
		size_t chunk = (size_t)std::min<uint64_t>(len - done, kPage - (a & (kPage - 1)));
		size_t got = 0;
		while (got < chunk) {
			lldb::SBError pe;
			size_t n = p->process.ReadMemory(a + got, out + done + got, chunk - got, pe);
			if (n == 0)
				n = read_from_file(p, a + got, out + done + got, chunk - got);
			if (n == 0)
				break;
			got += n;
		}
		done += got;
		if (got < chunk)
			break;
	}
	return (int64_t)done;
}

uint64_t adac_lldb_process_local_pid(adac_lldb_process *p)
{
	lldb::SBPlatform platform = target_of(p).GetPlatform();
	const char *name = platform.IsValid() ? platform.GetName() : nullptr;
	const char *plugin = p->process.GetPluginName();
	if (!name || std::strcmp(name, "host") != 0 || !plugin || std::strcmp(plugin, "gdb-remote") != 0)
		return 0;
	return p->process.GetProcessID();
}

int adac_lldb_process_core_file(adac_lldb_process *p, char *buf, size_t size)
{
	const char *plugin = p->process.GetPluginName();
	if (!plugin || std::strcmp(plugin, "elf-core") != 0)
		return -1;
	lldb::SBFileSpec file = p->process.GetCoreFile();
	uint32_t n = file.IsValid() ? file.GetPath(buf, size) : 0;
	return n > 0 && n < size ? 0 : -1;
}

size_t adac_lldb_process_breakpoint_sites(adac_lldb_process *p, uint64_t *addrs, size_t cap)
{
	lldb::SBTarget target = target_of(p);
	size_t n = 0;
	for (uint32_t i = 0, nb = target.GetNumBreakpoints(); i < nb; i++) {
		lldb::SBBreakpoint bp = target.GetBreakpointAtIndex(i);
		if (!bp.IsEnabled())
			continue;
		for (size_t j = 0, nl = bp.GetNumLocations(); j < nl; j++) {
			lldb::SBBreakpointLocation loc = bp.GetLocationAtIndex((uint32_t)j);
			if (!loc.IsEnabled() || !loc.IsResolved())
				continue;
			if (n < cap)
				addrs[n] = loc.GetLoadAddress();
			n++;
		}
	}
	return n;
}

int adac_lldb_process_modules(adac_lldb_process *p, adac_module_cb cb, void *ctx, adac_error *err)
{
	if (!process_alive(p, err))
		return -1;
	lldb::SBTarget target = target_of(p);
	char path[4096];
	for (uint32_t i = 0, n = target.GetNumModules(); i < n; i++) {
		lldb::SBModule mod = target.GetModuleAtIndex(i);
		uint64_t base = UINT64_MAX, end = 0, mem_end = 0;
		for (size_t s = 0, ns = mod.GetNumSections(); s < ns; s++) {
			lldb::SBSection sec = mod.GetSectionAtIndex(s);
			uint64_t load = sec.GetLoadAddress(target);
			if (load == LLDB_INVALID_ADDRESS)
				continue;
			if (sec.GetFileOffset() == 0 && load < base)
				base = load;
			// The file's mappings end at the page after its last file bytes; a .bss beyond
			// that is anonymous memory, as the core and pid backends see it.
			if (sec.GetFileByteSize() > 0)
				end = std::max<uint64_t>(end, (load + sec.GetFileByteSize() + kPage - 1) & ~(kPage - 1));
			mem_end = std::max<uint64_t>(mem_end, load + sec.GetByteSize());
		}
		if (end == 0)
			end = mem_end;
		if (base == UINT64_MAX) {
			uint64_t hdr = mod.GetObjectFileHeaderAddress().GetLoadAddress(target);
			if (hdr == LLDB_INVALID_ADDRESS)
				continue;  // not loaded in this process
			base = hdr;
		}
		struct adac_module m;
		std::memset(&m, 0, sizeof m);
		path[0] = '\0';
		mod.GetFileSpec().GetPath(path, sizeof path);  // truncated if longer, always terminated
		m.path = path;
		m.base = base;
		m.end = end > base ? end : base;
		if (const char *uuid = mod.GetUUIDString())
			if (!parse_build_id(uuid, m.build_id, &m.build_id_len))
				m.build_id_len = 0;
		if (cb(ctx, &m))
			break;
	}
	return 0;
}

int adac_lldb_process_threads(adac_lldb_process *p, adac_thread_cb cb, void *ctx, adac_error *err)
{
	if (!process_alive(p, err))
		return -1;
	for (uint32_t i = 0, n = p->process.GetNumThreads(); i < n; i++) {
		lldb::SBThread th = p->process.GetThreadAtIndex(i);
		if (!th.IsValid())
			continue;
		struct adac_thread t;
		std::memset(&t, 0, sizeof t);
		t.tid = th.GetThreadID();
		t.index = th.GetIndexID();
		if (const char *name = th.GetName())
			std::snprintf(t.name, sizeof t.name, "%s", name);
		// What LLDB's own thread line says after "stop reason = " (nothing for threads that did
		// not stop for a reason of their own).
		lldb::StopReason why = th.GetStopReason();
		if (why != lldb::eStopReasonNone && why != lldb::eStopReasonInvalid &&
		    !(why == lldb::eStopReasonSignal && th.GetStopReasonDataCount() && th.GetStopReasonDataAtIndex(0) == 0))
			th.GetStopDescription(t.stop_reason, sizeof t.stop_reason);
		if (why == lldb::eStopReasonSignal && th.GetStopReasonDataCount())
			t.signo = (int)th.GetStopReasonDataAtIndex(0);
		if (cb(ctx, &t))
			break;
	}
	return 0;
}

int adac_lldb_process_regs(adac_lldb_process *p, uint64_t tid, adac_regs *regs, adac_error *err)
{
	if (!process_alive(p, err))
		return -1;
	lldb::SBThread th = thread_by_tid(p, tid, err);
	if (!th.IsValid())
		return -1;
	return frame_regs(th.GetFrameAtIndex(0), tid, regs, err);
}

bool adac_lldb_process_frames_replaced(adac_lldb_process *p, uint64_t tid)
{
	lldb::SBThread th = p->process.IsValid() ? p->process.GetThreadByID(tid) : lldb::SBThread();
	if (!th.IsValid())
		return false;
	for (uint32_t i = 0, n = th.GetNumFrames(); i < n; i++)
		if (th.GetFrameAtIndex(i).IsSynthetic())
			return true;
	return false;
}

int adac_lldb_process_frames(adac_lldb_process *p, uint64_t tid, adac_frame_cb cb, void *ctx, adac_error *err)
{
	if (!process_alive(p, err))
		return -1;
	lldb::SBThread th = thread_by_tid(p, tid, err);
	if (!th.IsValid())
		return -1;
	describe_frames(th, th.GetNumFrames(), target_of(p), cb, ctx);
	return 0;
}

// ---- a frame provider's input frames ----

namespace {

const lldb::SBFrameList *frame_list(uint64_t list, adac_error *err)
{
	const lldb::SBFrameList *l = reinterpret_cast<const lldb::SBFrameList *>(static_cast<uintptr_t>(list));
	if (!l || !l->IsValid()) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "no frame list at 0x%" PRIx64, list);
		return nullptr;
	}
	return l;
}

}  // namespace

int adac_lldb_frame_list_frames(uint64_t list, adac_frame_cb cb, void *ctx, adac_error *err)
{
	const lldb::SBFrameList *l = frame_list(list, err);
	if (!l)
		return -1;
	describe_frames(*l, l->GetSize(), l->GetThread().GetProcess().GetTarget(), cb, ctx);
	return 0;
}

int adac_lldb_frame_list_regs(uint64_t list, adac_regs *regs, adac_error *err)
{
	const lldb::SBFrameList *l = frame_list(list, err);
	return l ? frame_regs(l->GetFrameAtIndex(0), l->GetThread().GetThreadID(), regs, err) : -1;
}
