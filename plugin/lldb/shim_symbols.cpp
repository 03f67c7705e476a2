// shim_symbols.cpp - the SB calls of symbol files (shim_symbols.h): replacing the target's module of
// managed code, the stop id, and the summary of managed strings. Nothing here decides what is in
// the file.
#include <lldb/API/LLDB.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "shim_symbols.h"
#include "summaries.h"

#include "shim_sb.h"

int adac_lldb_process_replace_module(adac_lldb_process *p, const char *old_path, const char *new_path,
                                     adac_error *err)
{
	lldb::SBTarget target = p->process.GetTarget();
	if (!target.IsValid())
		return adac_fail(err, ADAC_E_IO, 0, "the process has no target");
	if (old_path) {
		lldb::SBModule old = target.FindModule(lldb::SBFileSpec(old_path, false));
		if (old.IsValid())
			target.RemoveModule(old);
	}
	lldb::SBModule m = target.AddModule(new_path, nullptr, nullptr);
	if (!m.IsValid())
		return adac_fail(err, ADAC_E_IO, 0, "LLDB could not add the module %s", new_path);
	// The file's addresses are the code's own: slide 0.
	lldb::SBError e = target.SetModuleLoadAddress(m, (uint64_t)0);
	if (e.Fail()) {
		target.RemoveModule(m);
		return adac_fail(err, ADAC_E_IO, 0, "LLDB could not load %s: %s", new_path,
		                 e.GetCString() ? e.GetCString() : "unknown error");
	}
	return 0;
}

// Whether two paths name one file.
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int adac_lldb_process_show_module(adac_lldb_process *p, const char *path, uint64_t base, adac_error *err)
{
	lldb::SBTarget target = p->process.GetTarget();
	if (!target.IsValid())
		return adac_fail(err, ADAC_E_IO, 0, "the process has no target");
	char have[4096];
	for (uint32_t i = 0, n = target.GetNumModules(); i < n; i++) {
		lldb::SBModule m = target.GetModuleAtIndex(i);
		if (m.GetObjectFileHeaderAddress().GetLoadAddress(target) != base)
			continue;
		have[0] = '\0';
		m.GetFileSpec().GetPath(have, sizeof have);
		if (same_file(have, path))
			return 0;
		// Another file at the module's address: this machine's file at the process's path.
		target.RemoveModule(m);
		break;
	}
	lldb::SBModule m = target.AddModule(path, nullptr, nullptr);
	if (!m.IsValid())
		return adac_fail(err, ADAC_E_IO, 0, "LLDB could not add the module %s", path);
	// Slid by where its ELF header is mapped against where the file puts it.
	uint64_t own = m.GetObjectFileHeaderAddress().GetFileAddress();
	lldb::SBError e = target.SetModuleLoadAddress(m, own == LLDB_INVALID_ADDRESS ? base : base - own);
	if (e.Fail()) {
		target.RemoveModule(m);
		return adac_fail(err, ADAC_E_IO, 0, "LLDB could not load %s: %s", path,
		                 e.GetCString() ? e.GetCString() : "unknown error");
	}
	return 0;
}

namespace {
constexpr char kDirPrefix[] = "asyncdac-symbols-";
constexpr char kFileName[] = "managed";
}  // namespace

// The numbers handed out in this process: their files are removed when LLDB exits (a target's
// session removes its own when it ends, which LLDB does not do at exit).
static unsigned g_last_file;

static void remove_all_files()
{
	const char *tmp = std::getenv("TMPDIR");
	char path[4096];
	for (unsigned n = 1; n <= g_last_file; n++) {
		std::snprintf(path, sizeof path, "%s/%s%ld-%u/%s", tmp && *tmp ? tmp : "/tmp", kDirPrefix, (long)getpid(), n,
		              kFileName);
		adac_lldb_remove_symbols_file(path);
	}
}

int adac_lldb_symbols_file(unsigned n, char *buf, size_t size, adac_error *err)
{
	if (g_last_file == 0)
		std::atexit(remove_all_files);
	if (n > g_last_file)
		g_last_file = n;
	const char *tmp = std::getenv("TMPDIR");
	int len = std::snprintf(buf, size, "%s/%s%ld-%u", tmp && *tmp ? tmp : "/tmp", kDirPrefix, (long)getpid(), n);
	if (len < 0 || (size_t)len + sizeof kFileName + 1 > size)
		return adac_fail(err, ADAC_E_IO, 0, "the temporary directory's path is too long");
	if (mkdir(buf, 0700) != 0 && errno != EEXIST)
		return adac_fail(err, ADAC_E_IO, 0, "cannot create %s: %s", buf, std::strerror(errno));
	std::snprintf(buf + len, size - (size_t)len, "/%s", kFileName);
	return 0;
}

int adac_lldb_is_symbols_file(const char *path)
{
	const char *slash = path ? std::strrchr(path, '/') : nullptr;
	if (!slash || std::strcmp(slash + 1, kFileName) != 0)
		return 0;
	const char *dir = slash;
	while (dir > path && dir[-1] != '/')
		dir--;
	return std::strncmp(dir, kDirPrefix, sizeof kDirPrefix - 1) == 0;
}

void adac_lldb_remove_symbols_file(const char *path)
{
	if (!adac_lldb_is_symbols_file(path))
		return;
	unlink(path);
	std::string dir(path, std::strrchr(path, '/') - path);
	rmdir(dir.c_str());
}

uint64_t adac_lldb_cmd_stop_id(adac_lldb_cmd *cmd)
{
	lldb::SBProcess process = cmd->debugger.GetSelectedTarget().GetProcess();
	return process.IsValid() ? process.GetStopID(true) : 0;
}

namespace {

constexpr uint32_t kMaxSummaryChars = 256;  // the CLI's default string limit

// A managed string: _stringLength UTF-16 code units from _firstChar. The value is the object's
// struct ("System.String object") or a reference to it (the typedef string).
bool string_summary(lldb::SBValue value, lldb::SBTypeSummaryOptions, lldb::SBStream &stream)
{
	lldb::SBValue obj = value;
	if (value.GetType().GetCanonicalType().IsPointerType()) {
		if (value.GetValueAsUnsigned(0) == 0) {
			stream.Printf("null");
			return true;
		}
		obj = value.Dereference();
	}
	lldb::SBValue len_v = obj.GetChildMemberWithName("_stringLength");
	lldb::SBValue chars = obj.GetChildMemberWithName("_firstChar");
	lldb::SBError e;
	int64_t len = len_v.IsValid() ? len_v.GetValueAsSigned(e, -1) : -1;
	uint64_t at = chars.IsValid() ? chars.GetLoadAddress() : LLDB_INVALID_ADDRESS;
	if (e.Fail() || len < 0 || at == LLDB_INVALID_ADDRESS)
		return false;
	size_t n = (size_t)std::min<int64_t>(len, kMaxSummaryChars);
	std::vector<uint16_t> units(n ? n : 1);
	lldb::SBProcess process = value.GetProcess();
	lldb::SBError re;
	if (n && process.ReadMemory(at, units.data(), n * 2, re) != n * 2)
		return false;
	char *text = adac_lldb_utf16_literal(units.data(), n, (size_t)len > n);
	if (!text)
		return false;
	stream.Printf("%s", text);
	std::free(text);
	return true;
}

}  // namespace

void adac_lldb_add_summaries(lldb::SBDebugger &debugger)
{
	lldb::SBTypeCategory cat = debugger.GetCategory("asyncdac");
	if (!cat.IsValid())
		cat = debugger.CreateCategory("asyncdac");
	lldb::SBTypeSummary summary = lldb::SBTypeSummary::CreateWithCallback(string_summary);
	cat.AddTypeSummary(lldb::SBTypeNameSpecifier("string", false), summary);
	cat.AddTypeSummary(lldb::SBTypeNameSpecifier("System.String object", false), summary);
	cat.SetEnabled(true);
}
